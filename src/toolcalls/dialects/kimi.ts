// Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>
// {…}<|tool_call_end|><|tool_calls_section_end|>; the id (`functions.NAME:0`) is not reused.
// Kimi K3 writes a format of its own (kimi-k3.ts).

import type { RegionParser } from "./candidate.ts";
import { callsOf, region, type Dialect } from "./dialect.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";

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

const kimiRegion: RegionParser = (body) => callsOf(parseKimiCalls(body));

export const kimi: Dialect = {
  name: "Kimi K2",
  calls: [
    ["<|tool_calls_section_begin|>", region(kimiRegion, ["<|tool_calls_section_end|>"], { valueStart: undefined })],
    ["<|tool_call_begin|>", region(kimiRegion, ["<|tool_call_end|>"], { valueStart: undefined })],
  ],
  innerTokens: ["<|tool_call_argument_begin|>"],
};
