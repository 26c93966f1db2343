// The body of a tag or special-token region that holds JSON: one value, or several separated by
// whitespace, `;` or `,` (Llama 3.x, Granite-20B, MiniMax-M1), possibly inside a code fence.

import { BalancedScanner } from "../text/balanced-scanner.ts";
import { decodeJsonCalls } from "./decode-json-calls.ts";
import type { RawCall, RegionParse } from "../scoring/raw-call.ts";
import { appendAll } from "../scoring/problems.ts";
import { readJsonLenient } from "../json/read-json-lenient.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

/** The inside of a ```lang … ``` fence, or null when `text` is not one. */
export function unfence(text: string): string | null {
  const m = /^\s*```[\w-]*[^\S\n]*\n?([\s\S]*?)(?:\n?```\s*)?$/.exec(text);
  return m ? m[1]! : null;
}

export function parseJsonBody(body: string, tools: ToolSet, allowResponse: boolean): RegionParse | null {
  const inner = unfence(body);
  const text = inner ?? body;
  const calls: RawCall[] = [];
  let content: string | undefined;
  let i = 0;
  for (;;) {
    while (i < text.length && /[\s;,]/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const c = text[i];
    if (c !== "{" && c !== "[") break;
    const scanner = new BalancedScanner(i);
    const end = scanner.scan(text);
    const slice = text.slice(i, end < 0 ? text.length : end);
    const json = readJsonLenient(slice);
    const decoded = json && decodeJsonCalls(json.node, json, tools, allowResponse && calls.length === 0);
    if (!decoded) {
      if (calls.length === 0 && content === undefined) return null;
      break;
    }
    appendAll(calls, decoded.calls);
    if (decoded.content !== undefined) content = (content ?? "") + decoded.content;
    i = end < 0 ? text.length : end;
  }
  if (calls.length === 0 && content === undefined) return null;
  const out: RegionParse = { calls };
  if (content !== undefined) out.content = content;
  if (inner === null && i < text.length) out.rest = i;
  return out;
}
