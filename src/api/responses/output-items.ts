// The Responses output items a tool call or reasoning becomes, in OpenAI's shapes.
import type { Sealer } from "./sealer.ts";
import type { LocalShellAction } from "./local-shell.ts";
import { sealReasoning } from "./sealed-reasoning.ts";
import type { ToolOrigin } from "./tool-origin.ts";

// The Responses output items a tool call or reasoning becomes, in the shapes openai-node types them
// (ResponseFunctionToolCall, ResponseCustomToolCall, ResponseOutputItem.LocalShellCall,
// ResponseReasoningItem).

type Json = Record<string, unknown>;
type Status = "in_progress" | "completed";
type Named = Extract<ToolOrigin, { name: string }>;

const namespaceOf = (o: Named) => (o.namespace ? { namespace: o.namespace } : {});

export function functionCallItem(id: string, callId: string, origin: Named, args: string, status: Status): Json {
  return { id, type: "function_call", status, call_id: callId, name: origin.name, ...namespaceOf(origin), arguments: args };
}

export function customToolCallItem(id: string, callId: string, origin: Named, input: string, status: Status): Json {
  return { id, type: "custom_tool_call", status, call_id: callId, name: origin.name, ...namespaceOf(origin), input };
}

export function localShellCallItem(id: string, callId: string, action: LocalShellAction, status: Status): Json {
  return { id, type: "local_shell_call", status, call_id: callId, action };
}

/** A finished reasoning item; with a sealer, its `encrypted_content` carries the text to the next turn. */
export function reasoningItem(id: string, text: string, sealer: Sealer | undefined): Json {
  return {
    id,
    type: "reasoning",
    summary: [],
    content: [{ type: "reasoning_text", text }],
    ...(sealer ? { encrypted_content: sealReasoning(sealer, text) } : {}),
    status: "completed",
  };
}
