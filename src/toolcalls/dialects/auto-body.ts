// The body of a region whose marker several families share (Hermes' <tool_call>, LFM2's
// <|tool_call_start|>, Llama's <|python_tag|> and <|python_start|>, OLMo's <function_calls>, <xml>),
// read by what it holds: Qwen3-Coder's <function=…>, MiniMax's <invoke> (M3's namespaced too),
// JSON, pythonic calls, or else GLM's NAME<arg_key>…; a code fence around any of these is removed.

import type { RegionParser } from "./candidate.ts";
import { callsOf } from "./dialect.ts";
import { parseGlmCall } from "./glm.ts";
import { parseMinimaxCalls } from "./minimax.ts";
import { MINIMAX_NS, parseMinimaxM3Calls } from "./minimax-m3.ts";
import { pythonicCalls } from "./pythonic.ts";
import { parseQwenXmlCalls } from "./qwen3-coder.ts";
import { parseJsonBody, unfence } from "../parse/parse-json-body.ts";
import type { RegionParse } from "../scoring/raw-call.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

function autoBody(body: string, tools: ToolSet, closed: boolean): RegionParse | null {
  const t = body.trim();
  if (t.startsWith("```")) {
    const inner = unfence(t);
    return inner === null ? null : autoBody(inner, tools, closed);
  }
  if (/<function[=\s]/.test(t)) return callsOf(parseQwenXmlCalls(t, closed));
  // MiniMax-M3 whose namespace token before <tool_call> was left out.
  if (t.includes(`${MINIMAX_NS}<invoke`)) return callsOf(parseMinimaxM3Calls(t, closed));
  if (/<invoke\s/.test(t)) return callsOf(parseMinimaxCalls(t, closed));
  if (t.startsWith("{") || t.startsWith("[")) {
    return parseJsonBody(body, tools, false) ?? (t.startsWith("[") ? pythonicCalls(t, tools) : null);
  }
  if (/^[\w.\-]+\s*\(/.test(t)) return pythonicCalls(t, tools);
  return callsOf(parseGlmCall(t, closed));
}

export const autoRegion: RegionParser = (body, closed, _spec, tools) => autoBody(body, tools, closed);
