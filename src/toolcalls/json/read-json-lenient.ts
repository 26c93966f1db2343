// Strict first, jsonrepair second. All repair is jsonrepair's: trailing commas, single quotes,
// Python's True/False/None, unquoted keys, and values cut off at max_tokens. jsonrepair's cost grows
// with the square of its input on some text (each missing comma it inserts re-copies all its output
// so far), so only text up to MAX_REPAIR_LENGTH goes to it (docs/tool-calls.md#arguments).

import { jsonrepair } from "jsonrepair";
import { isCutOff } from "../text/balanced-scanner.ts";
import type { JsonNode } from "./json-node.ts";
import { escapeRawControls } from "./escape-raw-controls.ts";
import { MAX_JSON_DEPTH, parseJson } from "./parse-json.ts";

/**
 * The longest text handed to jsonrepair, in UTF-16 code units. Its worst text this long
 * (`[1 1 1 …]`, a comma missing every two characters) takes about 4 ms; twice as long, four times
 * that (128 KB took 4 s). Longer text that is not strict JSON gets one linear repair, raw control
 * characters in strings escaped (a file's content written with literal newlines); past that it is
 * unreadable, as any unrepairable JSON is. Real arguments needing more repair are far shorter.
 */
export const MAX_REPAIR_LENGTH = 8 * 1024;

export interface LenientJson {
  node: JsonNode;
  /** The text the node's spans point into: the input, or jsonrepair's output. */
  text: string;
  repaired: boolean;
  /** The input stopped inside a string or bracket (generation hit max_tokens). */
  truncated: boolean;
}

export function readJsonLenient(input: string): LenientJson | null {
  const text = input.trim();
  if (text === "") return null;
  const strict = parseJson(text);
  if (strict) return { node: strict, text, repaired: false, truncated: false };
  // Nested deeper than the strict reader goes, a repair would be refused anyway (nothing a model
  // means nests that deep), and jsonrepair closes each unclosed bracket by copying all its output
  // so far: `{` repeated 32,000 times took half a second, four times as many eight seconds.
  if (nestsDeeper(text, MAX_JSON_DEPTH)) return null;
  if (text.length > MAX_REPAIR_LENGTH) return escapedOnly(text);
  let repairedText: string;
  try {
    repairedText = jsonrepair(text);
  } catch {
    return null;
  }
  const node = parseJson(repairedText);
  if (!node) return null;
  return { node, text: repairedText, repaired: true, truncated: isCutOff(text) };
}

/** Text too long for jsonrepair, read strictly once its strings' raw control characters are escaped. */
function escapedOnly(text: string): LenientJson | null {
  const escaped = escapeRawControls(text);
  const node = escaped === null ? null : parseJson(escaped);
  return node && escaped !== null ? { node, text: escaped, repaired: true, truncated: false } : null;
}

/** Whether brackets outside strings (either quote) nest deeper than `limit` anywhere in `text`. */
function nestsDeeper(text: string, limit: number): boolean {
  let depth = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote) {
      if (c === 92) i++;
      else if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) quote = c;
    else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if ((c === 125 || c === 93) && depth > 0) depth--;
  }
  return false;
}
