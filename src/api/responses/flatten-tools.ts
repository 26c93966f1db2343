// A Responses request's tools as the flat list of function tools a chat template takes, and the
// mapping back from the model's tool names to the client's tools.
import type { Tool } from "../../schemas/chat-request.ts";
import type { ResponsesNestedTool, ResponsesTool } from "../../schemas/responses-request.ts";
import { unsupported } from "../validate-body.ts";
import { customToolFunction } from "./custom-tool.ts";
import { localShellFunction } from "./local-shell.ts";
import { LOCAL_SHELL_NAME, type DroppedTool, type ToolNames, type ToolOrigin } from "./tool-origin.ts";

/** One tool the model is offered, and the client tool it stands for. */
export interface OfferedTool {
  origin: ToolOrigin;
  tool: Tool;
}

export interface FlatTools {
  /** What the model sees, in the client's order. */
  offered: OfferedTool[];
  /** Hosted (and unknown) tools left out: Switchyard cannot run them. */
  dropped: DroppedTool[];
  names: ToolNames;
}

/**
 * Pure: the request's `tools` → the function tools the model sees. Function tools stay as they are;
 * a `namespace` entry is flattened into its function and custom tools, each under its own name, or
 * `<namespace>__<name>` when another tool has that name too; custom tools and `local_shell` become
 * functions (see custom-tool.ts, local-shell.ts); every other type is a tool that runs on OpenAI's
 * side, and is dropped.
 */
export function flattenTools(tools: ResponsesTool[] | null | undefined): FlatTools {
  const entries: Array<{ origin: ToolOrigin; def: ResponsesNestedTool; context?: string }> = [];
  const dropped: DroppedTool[] = [];
  (tools ?? []).forEach((tool, index) => {
    const at = `tools[${index}]`;
    switch (tool.type) {
      case "function":
      case "custom":
        entries.push({ origin: { kind: tool.type, name: named(tool, at) }, def: tool });
        return;
      case "local_shell":
        entries.push({ origin: { kind: "local_shell" }, def: tool });
        return;
      case "namespace": {
        const namespace = named(tool, at);
        const context = tool.description ? `(${namespace}: ${tool.description})` : undefined;
        (tool.tools ?? []).forEach((inner, j) => {
          if (inner.type === "function" || inner.type === "custom") {
            entries.push({ origin: { kind: inner.type, name: named(inner, `${at}.tools[${j}]`), namespace }, def: inner, ...(context ? { context } : {}) });
          } else {
            dropped.push({ index, type: inner.type, namespace });
          }
        });
        return;
      }
      default:
        dropped.push({ index, type: tool.type });
    }
  });

  const bare = (o: ToolOrigin) => (o.kind === "local_shell" ? LOCAL_SHELL_NAME : o.name);
  const count = new Map<string, number>();
  for (const e of entries) count.set(bare(e.origin), (count.get(bare(e.origin)) ?? 0) + 1);
  const chatNameOf = (o: ToolOrigin) => {
    const name = bare(o);
    return o.kind !== "local_shell" && o.namespace && count.get(name)! > 1 ? `${o.namespace}__${name}` : name;
  };

  const byChatName = new Map<string, ToolOrigin>();
  const byOrigin = new Map<string, string>();
  const offered: OfferedTool[] = [];
  for (const { origin, def, context } of entries) {
    const chatName = chatNameOf(origin);
    if (byChatName.has(chatName)) continue; // the client sent two tools of one name: the first wins
    byChatName.set(chatName, origin);
    byOrigin.set(originKey(origin), chatName);
    offered.push({ origin, tool: toolFor(origin, def, chatName, context) });
  }
  return {
    offered,
    dropped,
    names: {
      origin: (chatName) => byChatName.get(chatName) ?? { kind: "function", name: chatName },
      chatName: (origin) => byOrigin.get(originKey(origin)) ?? bare(origin),
    },
  };
}

function originKey(o: ToolOrigin): string {
  return o.kind === "local_shell" ? o.kind : `${o.kind}\u0000${o.namespace ?? ""}\u0000${o.name}`;
}

function named(tool: { type: string; name?: string | undefined }, at: string): string {
  if (!tool.name) throw unsupported(`${at}.name`, `A ${tool.type} tool needs a name.`);
  return tool.name;
}

function toolFor(origin: ToolOrigin, def: ResponsesNestedTool, chatName: string, context?: string): Tool {
  if (origin.kind === "local_shell") return localShellFunction;
  if (origin.kind === "custom") return customToolFunction(def, chatName, context);
  const description = [def.description, context].filter(Boolean).join("\n\n");
  return {
    type: "function",
    function: {
      name: chatName,
      ...(description ? { description } : {}),
      ...(def.parameters != null ? { parameters: def.parameters } : {}),
      ...(def.strict != null ? { strict: def.strict } : {}),
    },
  };
}
