// The tools a Messages conversation ends up offering (deferred loading, added and removed tools):
// a chat template renders one tool list, so the model is offered the final set.
import type { MessagesTool } from "../../schemas/messages-request.ts";

/**
 * The tools a Messages conversation makes available, as Anthropic defines them (pure). Tools with
 * `defer_loading: true` are held back until a `tool_reference` names them (a tool search result, or
 * a system message's `tool_addition`); a `tool_addition` with a `tool_definition` adds a tool and a
 * `tool_removal` takes one away. A chat template renders one tool list for the whole conversation,
 * so the model sees the set as it stands at the end.
 */
export class ToolShelf {
  private readonly available = new Map<string, MessagesTool>();
  private readonly deferred = new Map<string, MessagesTool>();

  constructor(tools: readonly MessagesTool[] = []) {
    for (const tool of tools) (tool.defer_loading === true ? this.deferred : this.available).set(tool.name, tool);
  }

  /** A `tool_reference`: a deferred tool of that name becomes available. */
  load(name: string): void {
    const tool = this.deferred.get(name);
    if (!tool) return;
    this.deferred.delete(name);
    this.available.set(name, tool);
  }

  add(tool: MessagesTool): void {
    this.deferred.delete(tool.name);
    this.available.delete(tool.name); // re-added at the end, as the newest definition
    this.available.set(tool.name, tool);
  }

  remove(name: string): void {
    this.available.delete(name);
    this.deferred.delete(name);
  }

  tools(): MessagesTool[] {
    return [...this.available.values()];
  }
}
