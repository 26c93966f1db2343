// Kimi K3's tagged calls, inside `<|open|>tools<|sep|>…<|close|>tools<|sep|>`:
//   <|open|>call tool="NAME" index="1"<|sep|>
//   <|open|>argument key="KEY" type="number"<|sep|>VALUE<|close|>argument<|sep|>
//   <|close|>call<|sep|>
// Attribute values are escaped (`&amp;`, `&quot;`); a value is the string itself for
// `type="string"`, JSON otherwise, and is read by the schema type like every text dialect's.

import type { RawCall } from "./raw-call.ts";
import { sepTag } from "./open-tags.ts";
import { parseTaggedCalls, type Value } from "./parse-xml-calls.ts";

const unescape = (s: string): string => s.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

// `<|open|>call\s+tool="NAME"…<|sep|>` and `<|open|>argument\s+key="KEY" ATTRIBUTES<|sep|>`.
const CALL = sepTag("<|open|>call", "tool");
const ARGUMENT = sepTag("<|open|>argument", "key");

const value: Value = (raw, attributes) => {
  const type = /\btype="([^"]*)"/.exec(attributes)?.[1];
  return type === undefined ? { raw } : { raw, hint: type === "string" ? "string" : "json" };
};

export function parseKimiK3Calls(body: string, regionClosed: boolean): RawCall[] | null {
  const calls = parseTaggedCalls(body, regionClosed, {
    call: CALL,
    callClose: "<|close|>call<|sep|>",
    parameter: ARGUMENT,
    parameterClose: "<|close|>argument<|sep|>",
    value,
  });
  if (!calls) return null;
  for (const c of calls) {
    c.name = unescape(c.name);
    if (c.arguments.kind === "text") for (const e of c.arguments.entries) e.key = unescape(e.key);
  }
  return calls;
}
