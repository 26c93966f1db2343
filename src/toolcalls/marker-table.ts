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

/** Solar Open: ID<|tool_call:name|>NAME<|tool_call:args|>{…}; the value starts after the args token. */
const solarStart = (body: string): number => {
  const at = body.indexOf("<|tool_call:args|>");
  if (at < 0) return -1;
  const j = skipSpace(body, at + "<|tool_call:args|>".length);
  if (j === body.length) return -1;
  return body[j] === "{" ? j : -2;
};

const region = (dialect: RegionSpec["dialect"], close: string[], extra: Partial<RegionSpec> = {}) =>
  (open: string): Candidate => ({
    kind: "region",
    length: open.length,
    spec: { dialect, close, reopen: [open], valueStart: jsonStart, multi: close.length > 0, ...extra },
  });

export type Build = (open: string) => Candidate;

const reasoning = (close: string, ends?: readonly string[]): Build => (open) => ({ kind: "reasoning", length: open.length, close: [close], ends });
const drop: Build = (open) => ({ kind: "drop", length: open.length });
const strayClose: Build = (open) => ({ kind: "drop", length: open.length, strayClose: true });

const DS_CLOSE = ["<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>", "<｜tool calls end｜>", "<｜tool\\_calls\\_end｜>"];

/**
 * Literal opening markers, most specific first where one is a prefix of another. Each region ends
 * at its closing marker or where its own opening marker comes again (a block of calls is never
 * opened twice in a row: the same opener repeated is read one region at a time, not each one to
 * the end of the text).
 */
export const CALL_MARKERS: Array<[string, Build]> = [
  ["<｜tool▁calls▁begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined })],
  ["<｜tool_calls_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined })],
  ["<｜tool calls begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined })],
  ["<｜tool\\_calls\\_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined })],
  ["<｜tool▁calls｜>", region("deepseek", DS_CLOSE, { valueStart: undefined })],
  ["<｜tool▁call▁begin｜>", region("deepseek", ["<｜tool▁call▁end｜>"], { valueStart: undefined })],
  ["<｜DSML｜function_calls>", region("dsml", ["</｜DSML｜function_calls>"], { valueStart: undefined })],
  ["<｜DSML｜tool_calls>", region("dsml", ["</｜DSML｜tool_calls>"], { valueStart: undefined })],
  ["<|tool_calls_section_begin|>", region("kimi", ["<|tool_calls_section_end|>"], { valueStart: undefined })],
  ["<|tool_call_begin|>", region("kimi", ["<|tool_call_end|>"], { valueStart: undefined })],
  // Hunyuan v3 (Hy3): GLM's layout in its own `:opensource` tags, the name ended by <tool_sep:opensource>.
  ["<tool_calls:opensource>", region("hunyuan", ["</tool_calls:opensource>"], { valueStart: undefined })],
  ["<tool_call:opensource>", region("hunyuan", ["</tool_call:opensource>"], { valueStart: undefined })],
  // Solar Open: one region per call; the <|tool_calls|> … <|calls|> around them are dropped (framing).
  ["<|tool_call:begin|>", region("solar", ["<|tool_call:end|>"], { valueStart: solarStart })],
  ["<|open|>tools<|sep|>", region("kimi-k3", ["<|close|>tools<|sep|>"], { valueStart: undefined })],
  ["<|START_ACTION|>", region("json", ["<|END_ACTION|>"])],
  ["<|tool_call|>", region("json", [], { multi: true })],
  // GigaChat 3.1; GigaChat 3 opens a "function call" message.
  ["<|function_call|>", region("json", [], { multi: false })],
  ["<|message_sep|>\n\nfunction call<|role_sep|>", region("json", [], { multi: false })],
  ["<|tool_call_start|>", region("auto", ["<|tool_call_end|>"], { valueStart: undefined })],
  ["<|python_start|>", region("auto", ["<|python_end|>"], { valueStart: undefined })],
  ["<|action_start|>", region("json", ["<|action_end|>"], { valueStart: afterPrefix("<|plugin|>") })],
  ["<|tools_prefix|>", region("json", ["<|tools_suffix|>"])],
  ["<|python_tag|>", region("auto", ["<|eom_id|>", "<|eot_id|>"], { multi: false, optionalClose: true })],
  ["<|tool_call>", region("gemma", ["<tool_call|>"], { valueStart: undefined })],
  // FunctionGemma: the Gemma call syntax between its own tokens, strings quoted with <escape>.
  ["<start_function_call>", region("gemma", ["<end_function_call>"], { valueStart: undefined })],
  // OLMo 3: pythonic calls, one per line, or JSON.
  ["<function_calls>", region("auto", ["</function_calls>"], { valueStart: undefined })],
  ["<minimax:tool_call>", region("minimax", ["</minimax:tool_call>"], { valueStart: undefined })],
  ["<seed:tool_call>", region("seed-xml", ["</seed:tool_call>"], { valueStart: undefined })],
  ["]<]minimax[>[<tool_call>", region("minimax-m3", ["]<]minimax[>[</tool_call>"], { valueStart: undefined })],
  ["<atem:function_calls>", region("atem", ["</atem:function_calls>"], { valueStart: undefined })],
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
  ["<mm:think>", reasoning("</mm:think>")],
  ["<|START_THINKING|>", reasoning("<|END_THINKING|>")],
  ["<|inner_prefix|>", reasoning("<|inner_suffix|>")],
  ["<|channel>thought", reasoning("<channel|>")],
  // Kimi-K3 may go straight from thinking to its answer or its calls without closing the block.
  ["<|open|>think<|sep|>", reasoning("<|close|>think<|sep|>", ["<|open|>response<|sep|>", "<|open|>tools<|sep|>"])],
  ["<think:opensource>", reasoning("</think:opensource>")],
  // Solar Open writes its reasoning as a message of its own: `<|think|>…<|end|><|begin|>assistant…`.
  ["<|think|>", reasoning("<|end|>")],
  // A closing tag with no opening one: the template opened the block (forced-open reasoning).
  ["</think>", strayClose],
  ["[/THINK]", strayClose],
  ["</seed:think>", strayClose],
  ["</mm:think>", strayClose],
  ["</think:opensource>", strayClose],
  ["<|END_THINKING|>", strayClose],
  ["<|close|>think<|sep|>", strayClose],
  ["[BEGIN FINAL RESPONSE]", strayClose],
  // Framing with no content of its own: turn ends, answer wrappers, channel markers left over.
  ["<|START_RESPONSE|>", drop],
  ["<|END_RESPONSE|>", drop],
  ["<|START_TEXT|>", drop],
  ["<|END_TEXT|>", drop],
  ["<|CHATBOT_TOKEN|>", drop],
  ["<|END_OF_TURN_TOKEN|>", drop],
  ["[END FINAL RESPONSE]", drop],
  ["<|open|>response<|sep|>", drop],
  ["<|close|>response<|sep|>", drop],
  ["<|close|>message<|sep|>", drop],
  // Solar Open's message framing: the next assistant message, its content, its call list.
  ["<|begin|>assistant", drop],
  ["<|content|>", drop],
  ["<|flush|>", drop],
  ["<|tool_calls|>", drop],
  ["<|calls|>", drop],
  ["<|channel>", drop],
  ["<channel|>", drop],
  ["<|end|>", drop],
  ["<|return|>", drop],
  ["<|eot|>", drop],
  ["<|eom|>", drop],
  ["<|eot_id|>", drop],
  ["<|eom_id|>", drop],
  ["<|im_end|>", drop],
];

/**
 * The closing markers of call regions, when no call is open. A special token (`<|tool_call_end|>`)
 * is never meant for the reader and is dropped wherever it is; a tag (`</tool_call>`) only right
 * after a call or at the start of the output, where it ends a call whose opening the template or
 * the model left out (Qwen3-Coder's `<function=…>…</function>\n</tool_call>`), and is text elsewhere.
 */
const CALL_CLOSERS = [
  ...new Set([
    "</function>",
    ...CALL_MARKERS.flatMap(([open, build]) => {
      const c = build(open);
      return c.kind === "region" ? c.spec.close : [];
    }),
  ]),
];
const SPECIAL_TOKEN = /^(?:<\|[^<>]*\|>|<｜[^<>]*｜>|\[[A-Z_]+\])$/;
export const STRAY_TOKEN_CLOSERS: Array<[string, Build]> = CALL_CLOSERS.filter((c) => SPECIAL_TOKEN.test(c)).map((c) => [c, drop]);
export const STRAY_TAG_CLOSERS: Array<[string, Build]> = CALL_CLOSERS.filter((c) => !SPECIAL_TOKEN.test(c)).map((c) => [c, drop]);

/** A model's special token (`<|…|>`, `<｜…｜>`, `[TOOL_CALLS]`), as opposed to a tag or a header. */
export const isSpecialToken = (marker: string): boolean => SPECIAL_TOKEN.test(marker);

/** A table's markers as a trie, so a position costs at most the longest marker's length to read. */
export interface MarkerTrie {
  next: Map<number, MarkerTrie>;
  /** The marker that ends here. */
  entry?: [string, Build];
}

export function trieOf(table: Array<[string, Build]>): MarkerTrie {
  const root: MarkerTrie = { next: new Map() };
  for (const entry of table) {
    let node = root;
    for (let i = 0; i < entry[0].length; i++) {
      const c = entry[0].charCodeAt(i);
      let child = node.next.get(c);
      if (!child) node.next.set(c, (child = { next: new Map() }));
      node = child;
    }
    node.entry ??= entry;
  }
  return root;
}

/** The longest marker of `table` opening at `j`, "maybe" while the text may still grow into one. */
export function literal(buf: string, j: number, eof: boolean, trie: MarkerTrie): Candidate {
  let node: MarkerTrie | undefined = trie;
  let best: [string, Build] | undefined;
  let i = j;
  for (; i < buf.length; i++) {
    node = node.next.get(buf.charCodeAt(i));
    if (!node) break;
    if (node.entry) best = node.entry;
  }
  // The text ended inside a longer marker: it may still become one.
  if (node && i === buf.length && !eof && node.next.size > 0) return MAYBE;
  return best ? best[1](best[0]) : NO;
}

export const REASONING_TRIE = trieOf(REASONING_MARKERS);
export const CALL_TRIE = trieOf(CALL_MARKERS);
export const STRAY_TOKEN_TRIE = trieOf(STRAY_TOKEN_CLOSERS);
export const STRAY_TAG_TRIE = trieOf(STRAY_TAG_CLOSERS);
