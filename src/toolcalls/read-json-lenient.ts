// Strict first, jsonrepair second. All repair is jsonrepair's: trailing commas, single quotes,
// Python's True/False/None, unquoted keys, and values cut off at max_tokens.

import { jsonrepair } from "jsonrepair";
import { isCutOff } from "./balanced-scanner.ts";
import type { JsonNode } from "./json-node.ts";
import { parseJson } from "./parse-json.ts";

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
