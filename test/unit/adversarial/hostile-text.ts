// Hostile model output, generated from the rewriter's own marker tables: every marker it reads,
// followed by what makes a scanner or a regex go superlinear (repeats, floods of whitespace, of its
// own prefix, of brackets, an unclosed call, a huge name). A new dialect's markers join the tables
// and so this suite, with no edit here; only openers read by their own rules are listed by hand.

import { CALL_MARKERS, REASONING_MARKERS } from "../../../src/toolcalls/dialects/marker-table.ts";
import { OUTPUT_MARKERS, rewriteToolCalls, ToolCallStreamRewriter, type ToolDefinition } from "../toolcalls/imports.ts";
import { TOOLS } from "../toolcalls/fixtures.ts";

/**
 * Openings read by their own rules rather than from the tables (the functions of the dialect files
 * that src/toolcalls/scan/classify-at.ts asks: fences, Command-R's Action, functools, Functionary,
 * harmony headers, bare JSON and pythonic calls). A new rule of that kind belongs here.
 */
export const RULE_OPENERS = [
  "<function=",
  '<function name="',
  '<invoke name="',
  "<|start|>assistant",
  "<|channel|>commentary to=functions.get_weather ",
  "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
  "```json\n",
  "```",
  "Action: ```json\n",
  "functools[",
  ">>>",
  ">>>get_weather\n",
  "get_weather(",
  "[get_weather(",
  '{"name": "get_weather", "arguments": ',
  '[{"name": "get_weather", "arguments": ',
  '{"name": "',
];

/** Every marker the rewriter reads (tables, their inner tokens, the rule openers), once. */
export const ALL_MARKERS: readonly string[] = [...new Set([...OUTPUT_MARKERS, ...RULE_OPENERS])];

/** The marker that closes what `open` opens, when the tables say (a call region, a reasoning block). */
export function closerOf(open: string): string | undefined {
  for (const [marker, build] of [...CALL_MARKERS, ...REASONING_MARKERS]) {
    if (marker !== open) continue;
    const c = build(marker);
    if (c.kind === "region") return c.spec.close[0];
    if (c.kind === "reasoning") return c.close[0];
  }
  return undefined;
}

/** `head`, then `unit` repeated until the text is about `chars` long, then `tail`. */
export function flood(head: string, unit: string, chars: number, tail = ""): string {
  const n = Math.max(1, Math.ceil((chars - head.length - tail.length) / Math.max(1, unit.length)));
  return head + unit.repeat(n) + tail;
}

export type Family = (marker: string, chars: number) => string;

/** What follows a marker in each hostile family. */
export const FAMILIES: Record<string, Family> = {
  "repeated": (m, n) => flood("", m, n),
  "then a whitespace flood": (m, n) => flood(m, " ", n, "x"),
  "then { and a whitespace flood": (m, n) => flood(m + "{", " ", n, "x"),
  "then a flood of its own prefix": (m, n) => flood(m, m.length > 1 ? m.slice(0, -1) : m + " ", n),
  "then nested [": (m, n) => flood(m, "[", n),
  "then nested {": (m, n) => flood(m, "{", n),
  "then nested {\"a\": [": (m, n) => flood(m, '{"a": [', n),
  "then an unclosed call": (m, n) => flood(m + '{"name": "get_weather", "arguments": {"city": "', "Paris ", n),
  "then a huge name": (m, n) => flood(m, "a", n),
  "with its closer, repeated": (m, n) => flood("", m + (closerOf(m) ?? "x"), n),
};

export type Mode = "one-shot" | "16-char pieces" | "1-char pieces";
export const MODES: readonly Mode[] = ["one-shot", "16-char pieces", "1-char pieces"];

/** The rewriter over `text` as one complete output, or streamed in pieces of the mode's size. */
export function rewrite(text: string, mode: Mode, tools: readonly ToolDefinition[] = TOOLS): void {
  if (mode === "one-shot") {
    rewriteToolCalls({ tools, text });
    return;
  }
  const step = mode === "16-char pieces" ? 16 : 1;
  const rw = new ToolCallStreamRewriter(tools);
  for (let i = 0; i < text.length; i += step) rw.push(text.slice(i, i + step));
  rw.flush();
}

/** The normal inputs as flood() pieces [head, unit, tail] (an upstream stand-in can repeat them itself). */
export const NORMAL_ANSWER: readonly [string, string, string] = ["", "The forecast for Paris: mild, some rain in the afternoon, clearing by evening. ", ""];
export const NORMAL_CALL: readonly [string, string, string] = ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "', "Paris and ", '"}}\n</tool_call>'];

/** A normal answer of about `chars`: prose, as a model writes it. */
export const plainAnswer = (chars: number): string => flood(NORMAL_ANSWER[0], NORMAL_ANSWER[1], chars, NORMAL_ANSWER[2]);

/** A normal tool call of about `chars`: one call whose argument carries the length. */
export const normalCall = (chars: number): string => flood(NORMAL_CALL[0], NORMAL_CALL[1], chars, NORMAL_CALL[2]);

/** What a normal input of `mode` costs per KB here and now: the dearer of an answer and a call. */
export function normalMsPerKb(mode: Mode, medianMs: (run: () => void) => number, chars = 32_000): number {
  const answer = plainAnswer(chars);
  const call = normalCall(chars);
  return Math.max(medianMs(() => rewrite(answer, mode)), medianMs(() => rewrite(call, mode))) / (chars / 1000);
}
