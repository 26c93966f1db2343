// The literal opening markers (special tokens and tags, reference §3 step 2) and what each one
// opens: a call region of some dialect, a reasoning block, or a token to drop.

import { MAYBE, NO, skipSpace, type Candidate } from "./candidate.ts";
import type { RegionSpec } from "./region-end.ts";

/** Where a JSON body starts after optional whitespace; -2 for a body that is not JSON. */
export const jsonStart = (body: string): number => {
  const i = skipSpace(body, 0);
  if (i === body.length) return -1;
  return body[i] === "{" || body[i] === "[" ? i : -2;
};

const afterPrefix = (prefix: string) => (body: string): number => {
  const i = skipSpace(body, 0);
  if (body.length - i < prefix.length && prefix.startsWith(body.slice(i))) return -1;
  const j = body.startsWith(prefix, i) ? skipSpace(body, i + prefix.length) : i;
  if (j === body.length) return -1;
  return body[j] === "{" || body[j] === "[" ? j : -2;
};

/** Mistral v11: NAME[CALL_ID]ID[ARGS]{…}; the brackets of [ARGS] are not the value. */
const mistralStart = (body: string, eof: boolean): number => {
  for (let i = 0; i < body.length; i++) {
    for (const tag of ["[ARGS]", "[CALL_ID]"]) {
      if (body.startsWith(tag, i)) {
        i += tag.length - 1;
        break;
      }
      if (!eof && body.length - i < tag.length && tag.startsWith(body.slice(i))) return -1;
    }
    const c = body[i];
    if (c === "{") return i;
    if (c === "[" && !body.startsWith("[ARGS]", i) && !body.startsWith("[CALL_ID]", i)) return i;
  }
  return -1;
};

const region = (dialect: RegionSpec["dialect"], close: string[], extra: Partial<RegionSpec> = {}) =>
  (open: string): Candidate => ({
    kind: "region",
    length: open.length,
    spec: { dialect, close, reopen: [open], valueStart: jsonStart, multi: close.length > 0, ...extra },
  });

export type Build = (open: string) => Candidate;

const reasoning = (close: string): Build => (open) => ({ kind: "reasoning", length: open.length, close });
const drop: Build = (open) => ({ kind: "drop", length: open.length });

const DS_CLOSE = ["<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>", "<｜tool calls end｜>", "<｜tool\\_calls\\_end｜>"];

/** Literal opening markers, most specific first where one is a prefix of another. */
export const CALL_MARKERS: Array<[string, Build]> = [
  ["<｜tool▁calls▁begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool_calls_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool calls begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool\\_calls\\_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool▁calls｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool▁call▁begin｜>", region("deepseek", ["<｜tool▁call▁end｜>"], { valueStart: undefined })],
  ["<|tool_calls_section_begin|>", region("kimi", ["<|tool_calls_section_end|>"], { valueStart: undefined, reopen: [] })],
  ["<|tool_call_begin|>", region("kimi", ["<|tool_call_end|>"], { valueStart: undefined })],
  ["<|START_ACTION|>", region("json", ["<|END_ACTION|>"])],
  ["<|tool_call|>", region("json", [], { multi: true })],
  ["<|tool_call_start|>", region("auto", ["<|tool_call_end|>"], { valueStart: undefined })],
  ["<|python_start|>", region("auto", ["<|python_end|>"], { valueStart: undefined })],
  ["<|action_start|>", region("json", ["<|action_end|>"], { valueStart: afterPrefix("<|plugin|>") })],
  ["<|tools_prefix|>", region("json", ["<|tools_suffix|>"])],
  ["<|python_tag|>", region("auto", ["<|eom_id|>", "<|eot_id|>"], { multi: false, optionalClose: true })],
  ["<|tool_call>", region("gemma", ["<tool_call|>"], { valueStart: undefined })],
  ["<minimax:tool_call>", region("minimax", ["</minimax:tool_call>"], { valueStart: undefined })],
  ["<seed:tool_call>", region("qwen-xml", ["</seed:tool_call>"], { valueStart: undefined })],
  ["<tool_call>", region("auto", ["</tool_call>"])],
  ["<tool_calls>", region("json", ["</tool_calls>"])],
  ["<TOOLCALL>", region("json", ["</TOOLCALL>"])],
  ["<function_call>", region("json", ["</function_call>"])],
  ["<tools>", region("json", ["</tools>"])],
  ["<json>", region("json", ["</json>"])],
  ["<JSON>", region("json", ["</JSON>"])],
  ["<xml>", region("auto", ["</xml>"])],
  ["<response>", region("json", ["</response>"], { multi: false })],
  ["[TOOL_CALLS]", region("mistral", [], { valueStart: mistralStart, multi: false })],
];

export const REASONING_MARKERS: Array<[string, Build]> = [
  ["<think>", reasoning("</think>")],
  ["[THINK]", reasoning("[/THINK]")],
  ["<seed:think>", reasoning("</seed:think>")],
  ["<|START_THINKING|>", reasoning("<|END_THINKING|>")],
  ["<|inner_prefix|>", reasoning("<|inner_suffix|>")],
  ["<|channel>thought", reasoning("<channel|>")],
  // A closing tag with no opening one: the template opened the block (forced-open reasoning).
  ["</think>", drop],
  ["[/THINK]", drop],
  ["</seed:think>", drop],
  ["<|START_RESPONSE|>", drop],
  ["<|END_RESPONSE|>", drop],
  ["<|end|>", drop],
  ["<|return|>", drop],
  ["<|eot_id|>", drop],
  ["<|eom_id|>", drop],
  ["<|im_end|>", drop],
];

/** The longest marker of `table` opening at `j`, "maybe" while the text may still grow into one. */
export function literal(buf: string, j: number, eof: boolean, table: Array<[string, Build]>): Candidate {
  let best: [string, Build] | null = null;
  let maybe = false;
  const avail = buf.length - j;
  const first = buf.charCodeAt(j);
  // The second character rules out nearly every marker at once (`<b>`, `<|im_end|>`…) before any
  // startsWith; when the text ends after the first one, every marker with that first one may follow.
  const second = avail > 1 ? buf.charCodeAt(j + 1) : -1;
  for (const entry of table) {
    const open = entry[0];
    if (open.charCodeAt(0) !== first || (second >= 0 && open.charCodeAt(1) !== second)) continue;
    if (buf.startsWith(open, j)) {
      if (!best || open.length > best[0].length) best = entry;
    } else if (!eof && avail < open.length && open.startsWith(buf.slice(j))) maybe = true;
  }
  if (maybe) return MAYBE;
  return best ? best[1](best[0]) : NO;
}
