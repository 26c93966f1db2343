// A Responses `tool_choice` in chat terms: which of the flattened tools the model is offered, and
// which it must call.
import type { Tool, ToolChoice } from "../../schemas/chat-request.ts";
import type { ResponsesToolChoice } from "../../schemas/responses-request.ts";
import { unsupported } from "../validate-body.ts";
import type { FlatTools, OfferedTool } from "./flatten-tools.ts";

/**
 * Pure: a Responses `tool_choice` → the chat `tool_choice` and the tools the model sees. A choice of
 * a hosted tool (dropped, see flatten-tools.ts) becomes `auto`; `allowed_tools` becomes its mode over
 * just those tools. With no tools left, neither is sent.
 */
export function convertToolChoice(choice: ResponsesToolChoice | null | undefined, flat: FlatTools): { tools: Tool[]; toolChoice?: ToolChoice } {
  let offered = flat.offered;
  let toolChoice: ToolChoice | undefined;
  if (choice == null) toolChoice = undefined;
  else if (typeof choice === "string") toolChoice = choice;
  else {
    switch (choice.type) {
      case "function":
      case "custom": {
        if (!choice.name) throw unsupported("tool_choice.name", `tool_choice of type "${choice.type}" needs a name.`);
        const namespace = typeof choice.namespace === "string" ? choice.namespace : undefined;
        const name = flat.names.chatName({ kind: choice.type, name: choice.name, ...(namespace ? { namespace } : {}) });
        toolChoice = { type: "function", function: { name } };
        break;
      }
      case "local_shell":
        toolChoice = offered.some((t) => t.origin.kind === "local_shell") ? { type: "function", function: { name: flat.names.chatName({ kind: "local_shell" }) } } : "auto";
        break;
      case "allowed_tools":
        offered = offered.filter((t) => (choice.tools ?? []).some((entry) => allows(entry, t)));
        toolChoice = choice.mode === "required" ? "required" : "auto";
        break;
      default:
        toolChoice = "auto"; // a hosted tool's type: it was dropped
    }
  }
  const tools = offered.map((t) => t.tool);
  if (tools.length === 0) return { tools };
  return toolChoice ? { tools, toolChoice } : { tools };
}

function allows(entry: { type: string; name?: string | null | undefined; [k: string]: unknown }, { origin }: OfferedTool): boolean {
  if (entry.type === "namespace") return origin.kind !== "local_shell" && origin.namespace === entry.name;
  if (entry.type === "local_shell") return origin.kind === "local_shell";
  if (origin.kind === "local_shell" || entry.type !== origin.kind || entry.name !== origin.name) return false;
  return typeof entry.namespace !== "string" || entry.namespace === origin.namespace;
}
