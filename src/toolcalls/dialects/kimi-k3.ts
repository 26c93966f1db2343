// Kimi K3's tagged calls, inside `<|open|>tools<|sep|>…<|close|>tools<|sep|>`:
//   <|open|>call tool="NAME" index="1"<|sep|>
//   <|open|>argument key="KEY" type="number"<|sep|>VALUE<|close|>argument<|sep|>
//   <|close|>call<|sep|>
// Attribute values are escaped (`&amp;`, `&quot;`); a value is the string itself for
// `type="string"`, JSON otherwise, and is read by the schema type like every text dialect's.
// Reasoning in `<|open|>think<|sep|>…<|close|>think<|sep|>`, the answer in `<|open|>response<|sep|>`.

import type { RegionParser } from "./candidate.ts";
import { callsOf, drop, reasoning, region, strayClose, type Dialect } from "./dialect.ts";
import { parseTaggedCalls, type Value } from "../parse/tagged-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";
import { sepTag } from "../text/open-tags.ts";

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

const kimiK3Region: RegionParser = (body, closed) => callsOf(parseKimiK3Calls(body, closed));

export const kimiK3: Dialect = {
  name: "Kimi K3",
  calls: [["<|open|>tools<|sep|>", region(kimiK3Region, ["<|close|>tools<|sep|>"], { valueStart: undefined })]],
  blocks: [
    // The model may go straight from thinking to its answer or its calls without closing the block.
    ["<|open|>think<|sep|>", reasoning("<|close|>think<|sep|>", ["<|open|>response<|sep|>", "<|open|>tools<|sep|>"])],
    ["<|close|>think<|sep|>", strayClose],
    ["<|open|>response<|sep|>", drop],
    ["<|close|>response<|sep|>", drop],
    ["<|close|>message<|sep|>", drop],
  ],
};
