// Gemma 4: <|tool_call>call:NAME{key:<|"|>text<|"|>, n:5}<tool_call|>, keys bare and strings
// between <|"|>; FunctionGemma writes the same between its own tokens with <escape> around strings.
// Reasoning in <|channel>thought…<channel|>; a leftover channel marker is dropped.

import type { RegionParser } from "./candidate.ts";
import { callsOf, drop, reasoning, region, type Dialect } from "./dialect.ts";
import { readJsonLenient } from "../json/read-json-lenient.ts";
import { problem } from "../scoring/problems.ts";
import type { RawCall } from "../scoring/raw-call.ts";
import { BalancedScanner } from "../text/balanced-scanner.ts";

/**
 * Gemma 4: call:NAME{key:<|"|>text<|"|>, n:5}; keys are bare and strings use <|"|>.
 * FunctionGemma writes the same with <escape> around strings.
 */
export function parseGemmaCalls(body: string): RawCall[] | null {
  const text = body.replace(/(<\|"\|>|<escape>)([\s\S]*?)(?:\1|$)/g, (_, _q: string, s: string) => JSON.stringify(s));
  const calls: RawCall[] = [];
  const head = /call:\s*([\w.\-]+)\s*(?=\{)/g;
  for (let m = head.exec(text); m; m = head.exec(text)) {
    const start = m.index + m[0].length;
    const end = new BalancedScanner(start).scan(text);
    const json = readJsonLenient(text.slice(start, end < 0 ? text.length : end));
    if (!json) return null;
    const problems = json.truncated ? [problem("truncated", "the output stopped inside this call (max_tokens?)")] : [];
    // Bare keys are the dialect, not a defect: no json_repaired.
    calls.push({ name: m[1]!, arguments: { kind: "node", node: json.node }, problems });
    // The next call starts after this one's arguments: a `call:` inside them is not one, and an
    // unclosed call runs to the end (so no text is scanned twice).
    if (end < 0) break;
    head.lastIndex = end;
  }
  return calls.length > 0 ? calls : null;
}

const gemmaRegion: RegionParser = (body) => callsOf(parseGemmaCalls(body));

export const gemma: Dialect = {
  name: "Gemma 4, FunctionGemma",
  calls: [
    ["<|tool_call>", region(gemmaRegion, ["<tool_call|>"], { valueStart: undefined })],
    ["<start_function_call>", region(gemmaRegion, ["<end_function_call>"], { valueStart: undefined })],
  ],
  blocks: [
    ["<|channel>thought", reasoning("<channel|>")],
    ["<|channel>", drop],
    ["<channel|>", drop],
  ],
};
