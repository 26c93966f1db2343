// Cohere Command R7B / A: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]
// <|END_ACTION|> (JSON, json.ts), reasoning in <|START_THINKING|>…<|END_THINKING|>, the answer
// between response and text tokens, which are dropped. Command-R+: `Action: ```json\n[…]\n```` (a
// code fence after the word, read as fences are: scan/classify-at.ts).

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "./candidate.ts";
import { drop, reasoning, region, strayClose, type Dialect, type FenceAt } from "./dialect.ts";
import { jsonRegion } from "./json.ts";

export const commandR: Dialect = {
  name: "Command R7B, Command A, Command-R+",
  calls: [["<|START_ACTION|>", region(jsonRegion, ["<|END_ACTION|>"])]],
  blocks: [
    ["<|START_THINKING|>", reasoning("<|END_THINKING|>")],
    ["<|END_THINKING|>", strayClose],
    ["<|START_RESPONSE|>", drop],
    ["<|END_RESPONSE|>", drop],
    ["<|START_TEXT|>", drop],
    ["<|END_TEXT|>", drop],
    ["<|CHATBOT_TOKEN|>", drop],
    ["<|END_OF_TURN_TOKEN|>", drop],
  ],
  openers: [{ chars: "A", where: "lineStartOrAfterSpace", order: 60, read: (buf, j, ctx, fence) => action(buf, j, ctx, fence) }],
};

/** Command-R+: `Action: ```json\n[…]\n````; a fence that cannot hold calls leaves `Action:` as text. */
export function action(buf: string, j: number, ctx: ScanContext, fence: FenceAt): Candidate {
  const head = buf.slice(j, j + 16);
  if (!head.startsWith("Action:")) return !ctx.eof && "Action:".startsWith(head) ? MAYBE : NO;
  const k = skipSpace(buf, j + 7);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (!buf.startsWith("```", k)) return buf.length - k < 3 && !ctx.eof && "```".startsWith(buf.slice(k)) ? MAYBE : NO;
  const f = fence(buf, j, k, ctx);
  return f.kind === "verbatim" ? NO : f;
}
