// Runs llama.cpp's chat-parser cases (test/fixtures/llama-chat, exported by scripts/llama-chat-fixtures.mjs)
// through the tool-call rewriter, one-shot and streamed at random split points, and compares the result
// with llama.cpp's expectation the way test-chat.cpp does: content and reasoning equal up to whitespace
// at their ends, the same calls in order, arguments equal as JSON. Ids are not compared (Switchyard mints
// its own, docs/tool-calls.md). Pure: the fixtures are passed in, so workerd and Node both run it.

import { rewriteToolCalls, ToolCallStreamRewriter } from "../../src/toolcalls/index.ts";
import type { RewriteOptions, ToolDefinition } from "../../src/toolcalls/index.ts";
import { reasoningOpenAtEnd } from "../../src/toolcalls/index.ts";

export interface LlamaChatMessage {
  content: string;
  reasoning_content: string;
  tool_calls: Array<{ name: string; arguments: string; id: string }>;
}

export interface LlamaChatCase {
  id: string;
  template: string;
  line: number;
  format: string;
  input: string;
  is_partial: boolean;
  tools: string[];
  tool_choice: "auto" | "required" | "none";
  parallel_tool_calls: boolean;
  json_schema: string;
  reasoning_format: "none" | "auto" | "deepseek" | "deepseek-legacy";
  enable_thinking: boolean;
  continue_final_message: "none" | "auto" | "reasoning" | "content";
  generation_prompt: string;
  messages: Array<LlamaChatMessage & { role: string }>;
  expect: LlamaChatMessage;
  /** What llama.cpp's parser returned (test-chat cases; cases written from a template have none). */
  actual?: LlamaChatMessage;
}

export type LlamaChatTools = Record<string, { name: string; description: string; parameters: Record<string, unknown> }>;

/** What a case is compared on. */
export interface Observed {
  content: string;
  reasoning: string;
  calls: Array<[string, unknown]>;
}

/** A case where Switchyard answers differently from llama.cpp on purpose: what it answers, and why. */
export interface Difference {
  expect: Observed;
  why: string;
}

export interface CaseOutcome {
  id: string;
  template: string;
  format: string;
  pass: boolean;
  /** Set when the case is judged against a deliberate difference instead of llama.cpp's expectation. */
  deliberate?: string;
  expected: Observed;
  oneShot: Observed;
  /** The first streamed split that gave something else than the expectation, if any. */
  streamMismatch?: { chunks: string[]; got: Observed };
}

const parseArgs = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
};

export function observedOf(m: LlamaChatMessage): Observed {
  return {
    content: m.content.trim(),
    reasoning: m.reasoning_content.trim(),
    calls: m.tool_calls.map((c) => [c.name, parseArgs(c.arguments)]),
  };
}

/** The rewriter's options for a case: what the request and the rendered prompt tell a parser. */
export function optionsFor(c: LlamaChatCase): RewriteOptions {
  const options: RewriteOptions = { tool_choice: c.tool_choice, parallel_tool_calls: c.parallel_tool_calls || undefined };
  options.generationPrompt = c.generation_prompt;
  // The request said the output continues the reasoning, even where the prompt shows no marker.
  if (c.continue_final_message === "reasoning" && reasoningOpenAtEnd(c.generation_prompt) === null) options.startInReasoning = true;
  if (c.continue_final_message !== "none") options.continuation = true;
  if (c.reasoning_format === "none") options.reasoningFormat = "none";
  if (c.json_schema !== "") options.jsonResponse = true;
  return options;
}

export function toolsFor(c: LlamaChatCase, tools: LlamaChatTools): ToolDefinition[] {
  return c.tools.map((key) => {
    const t = tools[key]!;
    return { type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } };
  });
}

/**
 * llama.cpp returns a prefilled assistant message the output continues as part of the message: its
 * content when the output continues the content, its reasoning when the prompt rendered it.
 */
function withPrefill(c: LlamaChatCase, o: Observed): Observed {
  if (c.continue_final_message === "none") return trimmed(o);
  const last = c.messages[c.messages.length - 1]!;
  if (last.role !== "assistant") return trimmed(o);
  const reasoningShown = last.reasoning_content !== "" && c.generation_prompt.includes(last.reasoning_content);
  return trimmed({
    content: c.continue_final_message === "content" ? last.content + o.content : o.content,
    reasoning: reasoningShown ? last.reasoning_content + o.reasoning : o.reasoning,
    calls: o.calls,
  });
}

const trimmed = (o: Observed): Observed => ({ content: o.content.trim(), reasoning: o.reasoning.trim(), calls: o.calls });

function oneShot(c: LlamaChatCase, tools: ToolDefinition[]): Observed {
  const r = rewriteToolCalls({ tools, text: c.input, ...optionsFor(c) });
  return withPrefill(c, {
    content: r.content ?? "",
    reasoning: r.reasoning_content ?? "",
    calls: r.tool_calls.map((t) => [t.function.name, parseArgs(t.function.arguments)]),
  });
}

function streamed(c: LlamaChatCase, tools: ToolDefinition[], chunks: string[], snapshot = false): Observed {
  const rw = new ToolCallStreamRewriter(tools, optionsFor(c));
  let content = "";
  let reasoning = "";
  const names = new Map<number, string>();
  const args = new Map<number, string>();
  for (const e of [...chunks.flatMap((ch) => rw.push(ch)), ...(snapshot ? [] : rw.flush())]) {
    if (e.type === "text") content += e.delta;
    else if (e.type === "reasoning") reasoning += e.delta;
    else if (e.type === "toolCall") {
      if (e.name !== undefined) names.set(e.index, e.name);
      args.set(e.index, (args.get(e.index) ?? "") + e.argumentsDelta);
    }
  }
  const calls = [...names.keys()].sort((a, b) => a - b).map((i): [string, unknown] => [names.get(i)!, parseArgs(args.get(i)!)]);
  return withPrefill(c, { content, reasoning, calls });
}

/** Seeded random split points (so a failure can be replayed): 1–9 characters at a time. */
export function splitAt(text: string, seed: number): string[] {
  let s = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = 1 + (s % 9);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/**
 * A partial case is llama.cpp's view of an output still being generated. Switchyard sends a call
 * only once it is complete (its arguments never change after they are sent), so at that point it
 * shows the same content and reasoning and only the calls whose arguments are already complete.
 */
function partialExpectation(c: LlamaChatCase): Observed {
  const o = observedOf(c.expect);
  return { ...o, calls: o.calls.filter(([, args]) => !(args && typeof args === "object" && "unparsed" in args)) };
}

export function runCase(
  c: LlamaChatCase,
  allTools: LlamaChatTools,
  differences: Record<string, Difference>,
  splits = 8,
): CaseOutcome {
  const tools = toolsFor(c, allTools);
  const diff = differences[c.id];
  const expected = diff ? diff.expect : c.is_partial ? partialExpectation(c) : observedOf(c.expect);
  const plans = [[...c.input], [c.input], ...Array.from({ length: splits }, (_, k) => splitAt(c.input, k + 1))];
  const got = c.is_partial ? streamed(c, tools, [c.input], true) : oneShot(c, tools);
  let pass = same(got, expected);
  let streamMismatch: CaseOutcome["streamMismatch"];
  for (const chunks of plans) {
    const s = streamed(c, tools, chunks, c.is_partial);
    if (!same(s, got) || !same(s, expected)) {
      streamMismatch = { chunks, got: s };
      pass = false;
      break;
    }
  }
  const outcome: CaseOutcome = { id: c.id, template: c.template, format: c.format, pass, expected, oneShot: got };
  if (diff) outcome.deliberate = diff.why;
  else if (c.is_partial) outcome.deliberate = "partial: a call is sent once its arguments are complete";
  if (streamMismatch) outcome.streamMismatch = streamMismatch;
  return outcome;
}
