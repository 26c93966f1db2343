// DeepSeek: V3 / R1 / V3.1 between full-width-bar tokens, `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>
// function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>` (V3.1: NAME<｜tool▁sep｜>{…}),
// with the misspellings classic llama.cpp accepts; V3.2 / V4 in DSML, MiniMax-M2's invoke tags in
// the `｜DSML｜` namespace (minimax.ts reads them), `string="true"` marking a value as the string itself.

import type { RegionParser } from "./candidate.ts";
import { callsOf, region, type Dialect } from "./dialect.ts";
import { parseInvokeCalls } from "./minimax.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import { unfence } from "../parse/parse-json-body.ts";
import type { RawCall } from "../scoring/raw-call.ts";

// DeepSeek's markers, with the misspellings classic llama.cpp accepts folded into one spelling.
const DS_CALLS = /<｜tool[▁_ \\]*calls(?:[▁_ \\]*begin)?｜>|<｜tool[▁_ \\]*calls[▁_ \\]*end｜>/g;
const DS_CALL = /<｜tool[▁_ \\]*call[▁_ \\]*(begin|end)｜>/g;
const DS_SEP = /<｜tool[▁_ \\]*sep｜>/g;

export function parseDeepSeekCalls(body: string): RawCall[] | null {
  const text = body
    .replace(DS_CALLS, "")
    .replace(DS_CALL, (_, which: string) => (which === "begin" ? "\u0001" : "\u0002"))
    .replace(DS_SEP, "\u0003");
  const parts = text.includes("\u0001") ? text.split("\u0001").slice(1) : [text];
  const calls: RawCall[] = [];
  for (const part of parts) {
    const end = part.indexOf("\u0002");
    const call = end >= 0 ? part.slice(0, end) : part;
    const sep = call.indexOf("\u0003");
    if (sep < 0) continue;
    const left = call.slice(0, sep).trim();
    let right = call.slice(sep + 1);
    let name = left;
    if (left === "function" || left === "") {
      // V3/R1: function<sep>NAME\n```json\n{…}\n```
      const nl = right.indexOf("\n");
      name = (nl < 0 ? right : right.slice(0, nl)).trim();
      right = nl < 0 ? "" : right.slice(nl + 1);
    }
    const args = unfence(right) ?? right;
    const parsed = namedJsonCall(name, args.trim() === "" ? "{}" : args);
    if (!parsed) return null;
    calls.push(parsed);
  }
  return calls.length > 0 ? calls : null;
}

const deepseekRegion: RegionParser = (body) => callsOf(parseDeepSeekCalls(body));
const dsmlRegion: RegionParser = (body, closed) => callsOf(parseInvokeCalls(body, closed, "｜DSML｜"));

const DS_CLOSE = ["<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>", "<｜tool calls end｜>", "<｜tool\\_calls\\_end｜>"];

export const deepseek: Dialect = {
  name: "DeepSeek V3, R1, V3.1, V3.2 and V4 (DSML)",
  calls: [
    ["<｜tool▁calls▁begin｜>", region(deepseekRegion, DS_CLOSE, { valueStart: undefined })],
    ["<｜tool_calls_begin｜>", region(deepseekRegion, DS_CLOSE, { valueStart: undefined })],
    ["<｜tool calls begin｜>", region(deepseekRegion, DS_CLOSE, { valueStart: undefined })],
    ["<｜tool\\_calls\\_begin｜>", region(deepseekRegion, DS_CLOSE, { valueStart: undefined })],
    ["<｜tool▁calls｜>", region(deepseekRegion, DS_CLOSE, { valueStart: undefined })],
    ["<｜tool▁call▁begin｜>", region(deepseekRegion, ["<｜tool▁call▁end｜>"], { valueStart: undefined })],
    ["<｜DSML｜function_calls>", region(dsmlRegion, ["</｜DSML｜function_calls>"], { valueStart: undefined })],
    ["<｜DSML｜tool_calls>", region(dsmlRegion, ["</｜DSML｜tool_calls>"], { valueStart: undefined })],
  ],
  innerTokens: ["<｜tool▁sep｜>"],
};
