// Dialects framed by model-specific special tokens: DeepSeek (full-width bars), Kimi K2, Gemma 4,
// Mistral's [TOOL_CALLS] name-first form, and the single-call bodies whose name sits in a header
// (harmony `to=functions.NAME`, functionary `>>>NAME`, `<function=NAME>`).

import { BalancedScanner } from "./balanced-scanner.ts";
import { readEncodedArguments } from "./decode-json-calls.ts";
import { isRegexSpace, skipRegexSpace } from "./forward-search.ts";
import { parseJsonBody, unfence } from "./parse-json-body.ts";
import type { RawCall } from "./raw-call.ts";
import { readJsonLenient } from "./read-json-lenient.ts";
import type { ToolSet } from "./tool-set.ts";
import { problem } from "./problems.ts";

/** A call whose name is known and whose body is its JSON arguments. */
export function namedJsonCall(name: string, body: string): RawCall | null {
  const text = body.trim();
  if (name.trim() === "" || (text !== "" && text[0] !== "{" && text[0] !== '"')) return null;
  const read = readEncodedArguments(text);
  return { name: name.trim(), arguments: read.arguments, problems: read.problems };
}

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

/** Kimi K2: <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|> */
export function parseKimiCalls(body: string): RawCall[] | null {
  const calls: RawCall[] = [];
  const parts = body.includes("<|tool_call_begin|>") ? body.split("<|tool_call_begin|>").slice(1) : [body];
  for (const part of parts) {
    const [id, rest] = part.split("<|tool_call_argument_begin|>");
    if (rest === undefined) continue;
    const name = id!.trim().replace(/^functions\./, "").replace(/:\d+$/, "");
    const end = rest.indexOf("<|tool_call_end|>");
    const call = namedJsonCall(name, end < 0 ? rest : rest.slice(0, end));
    if (!call) return null;
    calls.push(call);
  }
  return calls.length > 0 ? calls : null;
}

const SOLAR_BEGIN = "<|tool_call:begin|>";
const SOLAR_NAME = "<|tool_call:name|>";
const SOLAR_ARGS = "<|tool_call:args|>";
const SOLAR_END = "<|tool_call:end|>";

/**
 * Solar Open: <|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>,
 * several in a row, or the body of one <|tool_call:begin|> region. The id is the model's own.
 */
export function parseSolarCalls(body: string): RawCall[] | null {
  const calls: RawCall[] = [];
  const parts = body.includes(SOLAR_BEGIN) ? body.split(SOLAR_BEGIN).slice(1) : [body];
  for (const part of parts) {
    const args = part.indexOf(SOLAR_ARGS);
    if (args < 0) continue;
    const head = part.slice(0, args);
    const at = head.indexOf(SOLAR_NAME);
    const rest = part.slice(args + SOLAR_ARGS.length);
    const end = rest.indexOf(SOLAR_END);
    const call = namedJsonCall(at < 0 ? head : head.slice(at + SOLAR_NAME.length), end < 0 ? rest : rest.slice(0, end));
    if (!call) return null;
    calls.push(call);
  }
  return calls.length > 0 ? calls : null;
}

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

/** Mistral after [TOOL_CALLS]: a JSON array (before v11), or NAME[CALL_ID]ID[ARGS]{…} (v11+). */
export function parseMistralCalls(body: string, tools: ToolSet): RawCall[] | null {
  const t = body.trim();
  if (t.startsWith("[") && !t.startsWith("[ARGS]") && !t.startsWith("[CALL_ID]")) {
    return parseJsonBody(body, tools, false)?.calls ?? null;
  }
  if (t.startsWith("{")) return parseJsonBody(body, tools, false)?.calls ?? null;
  const split = mistralNameAndBody(t);
  if (!split) return null;
  const call = namedJsonCall(split.name, split.body);
  return call ? [call] : null;
}

/**
 * `NAME [CALL_ID]ID [ARGS]{…}` read in one pass, as the regex
 * `^([^\s[{]+?)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_-]*)?\s*(?:\[ARGS\])?\s*([{"][\s\S]*)$` would, without its
 * backtracking (three `\s*` in a row made it cubic in a run of spaces). The name stops at a space,
 * `[` or `{`, or earlier at a `"` (where the body may start).
 */
function mistralNameAndBody(t: string): { name: string; body: string } | null {
  const stops = (c: number) => isRegexSpace(c) || c === 91 /* [ */ || c === 123; /* { */
  if (t.length === 0 || stops(t.charCodeAt(0))) return null;
  let i = 1;
  while (i < t.length && !stops(t.charCodeAt(i)) && t[i] !== '"') i++;
  const name = t.slice(0, i);
  if (t[i] === '"') return { name, body: t.slice(i) };
  i = skipRegexSpace(t, i);
  if (t.startsWith("[CALL_ID]", i)) {
    i = skipRegexSpace(t, i + "[CALL_ID]".length);
    while (i < t.length && /[A-Za-z0-9_-]/.test(t[i]!)) i++;
    i = skipRegexSpace(t, i);
  }
  if (t.startsWith("[ARGS]", i)) i = skipRegexSpace(t, i + "[ARGS]".length);
  return t[i] === "{" || t[i] === '"' ? { name, body: t.slice(i) } : null;
}
