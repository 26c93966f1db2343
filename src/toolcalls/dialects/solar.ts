// Solar Open: reasoning as a message of its own (`<|think|>…<|end|>`), then the next assistant
// message (`<|begin|>assistant`), its text after `<|content|>`, its calls between <|tool_calls|> and
// <|calls|>, one region per call: <|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}
// <|tool_call:end|>. The framing around them is dropped; the id is the model's own and not reused.

import { skipSpace, type RegionParser } from "./candidate.ts";
import { callsOf, drop, reasoning, region, type Dialect } from "./dialect.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";

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

const solarRegion: RegionParser = (body) => callsOf(parseSolarCalls(body));

/** ID<|tool_call:name|>NAME<|tool_call:args|>{…}: the value starts after the args token. */
const solarStart = (body: string): number => {
  const at = body.indexOf(SOLAR_ARGS);
  if (at < 0) return -1;
  const j = skipSpace(body, at + SOLAR_ARGS.length);
  if (j === body.length) return -1;
  return body[j] === "{" ? j : -2;
};

export const solar: Dialect = {
  name: "Solar Open",
  calls: [[SOLAR_BEGIN, region(solarRegion, [SOLAR_END], { valueStart: solarStart })]],
  blocks: [
    ["<|think|>", reasoning("<|end|>")],
    ["<|begin|>assistant", drop],
    ["<|content|>", drop],
    ["<|flush|>", drop],
    ["<|tool_calls|>", drop],
    ["<|calls|>", drop],
  ],
  innerTokens: [SOLAR_NAME, SOLAR_ARGS],
};
