// A Responses request's `input` as the items stored with it and listed by `GET …/input_items`.
import { randomId } from "../../lib/ids.ts";

type Json = Record<string, unknown>;

const ID_PREFIX: Record<string, string> = {
  message: "msg_",
  function_call: "fc_",
  function_call_output: "fco_",
  custom_tool_call: "ctc_",
  custom_tool_call_output: "ctco_",
  local_shell_call: "lsh_",
  local_shell_call_output: "lsho_",
  reasoning: "rs_",
};

/**
 * Pure: a request's `input` as the list of items OpenAI keeps for it (`GET …/input_items`): a string
 * is one user message with an `input_text` part, a message's string content becomes one part, and
 * every item gets an id (its own, or a new one of its type's prefix).
 */
export function inputItemsOf(input: string | Json[]): Json[] {
  if (typeof input === "string") return [userText(input)];
  return input.map((item) => {
    const type = typeof item.type === "string" ? item.type : "message";
    const out: Json = { ...item, type };
    if (typeof out.id !== "string" || out.id === "") out.id = randomId(ID_PREFIX[type] ?? "item_");
    if (type === "message" && typeof out.content === "string") {
      out.content = [{ type: out.role === "assistant" ? "output_text" : "input_text", text: out.content }];
    }
    return out;
  });
}

function userText(text: string): Json {
  return { type: "message", id: randomId("msg_"), role: "user", content: [{ type: "input_text", text }] };
}
