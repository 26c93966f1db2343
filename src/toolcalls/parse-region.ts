// Reads a finished region with its dialect's parser, and adds what only the region knows
// (a closing marker that never came).

import { parseJsonBody, unfence } from "./parse-json-body.ts";
import { parsePythonicCalls } from "./parse-pythonic.ts";
import { parseKimiK3Calls } from "./parse-kimi-k3.ts";
import { MINIMAX_NS, parseMinimaxM3Calls } from "./parse-minimax-m3.ts";
import {
  parseGlmCall,
  parseHunyuanCalls,
  parseInvokeCalls,
  parseMiniCpmParameters,
  parseMinimaxCalls,
  parseQwenXmlCalls,
  parseQwenXmlParameters,
} from "./parse-xml-calls.ts";
import {
  namedJsonCall,
  parseDeepSeekCalls,
  parseGemmaCalls,
  parseKimiCalls,
  parseMistralCalls,
  parseSolarCalls,
} from "./parse-special-tokens.ts";
import { problem } from "./problems.ts";
import { jsonObject, setEntry, type JsonEntry } from "./json-node.ts";
import type { RawCall, RegionParse } from "./raw-call.ts";
import type { RegionSpec } from "./region-end.ts";
import type { ToolSet } from "./tool-set.ts";

/** Pythonic calls as raw calls; positional arguments take the declared parameters in order. */
export function pythonicRegion(body: string, tools: ToolSet): RegionParse | null {
  const calls = parsePythonicCalls(body);
  if (!calls) return null;
  return {
    calls: calls.map((c): RawCall => {
      const problems = c.truncated ? [problem("truncated", "the output stopped inside this call (max_tokens?)")] : [];
      const entries: JsonEntry[] = [];
      const positional = c.args.filter((a) => a.key === null);
      if (positional.length > 0) {
        const tool = tools.resolve(c.name, true)?.tool;
        const props = tool && typeof tool.schema.properties === "object" && tool.schema.properties !== null
          ? Object.keys(tool.schema.properties)
          : [];
        const named = new Set(c.args.map((a) => a.key));
        const free = props.filter((p) => !named.has(p));
        positional.forEach((a, i) => {
          const key = free[i] ?? `arg${i}`;
          a.key = key;
          problems.push(problem("positional_argument", `a positional argument was taken as "${key}"`, `/${key}`));
        });
      }
      for (const a of c.args) setEntry(entries, a.key!, a.value);
      return { name: c.name, arguments: { kind: "node", node: jsonObject(entries) }, problems };
    }),
  };
}

function autoBody(body: string, tools: ToolSet, closed: boolean): RegionParse | null {
  const t = body.trim();
  if (t.startsWith("```")) {
    const inner = unfence(t);
    return inner === null ? null : autoBody(inner, tools, closed);
  }
  if (/<function[=\s]/.test(t)) return wrap(parseQwenXmlCalls(t, closed));
  // MiniMax-M3 whose namespace token before <tool_call> was left out.
  if (t.includes(`${MINIMAX_NS}<invoke`)) return wrap(parseMinimaxM3Calls(t, closed));
  if (/<invoke\s/.test(t)) return wrap(parseMinimaxCalls(t, closed));
  if (t.startsWith("{") || t.startsWith("[")) {
    return parseJsonBody(body, tools, false) ?? (t.startsWith("[") ? pythonicRegion(t, tools) : null);
  }
  if (/^[\w.\-]+\s*\(/.test(t)) return pythonicRegion(t, tools);
  return wrap(parseGlmCall(t, closed));
}

const wrap = (calls: RawCall[] | RawCall | null): RegionParse | null =>
  calls === null ? null : { calls: Array.isArray(calls) ? calls : [calls] };

export function parseRegion(spec: RegionSpec, body: string, closed: boolean, tools: ToolSet): RegionParse | null {
  let parsed: RegionParse | null;
  switch (spec.dialect) {
    case "json":
      // InternLM2 names its plugin channel before the JSON.
      parsed = parseJsonBody(body.replace(/^\s*<\|plugin\|>/, ""), tools, spec.allowResponse === true);
      break;
    case "auto":
      parsed = autoBody(body, tools, closed);
      break;
    case "pythonic":
      parsed = pythonicRegion(body, tools);
      break;
    case "qwen-xml":
      parsed = wrap(parseQwenXmlCalls(body, closed));
      break;
    case "seed-xml":
      parsed = wrap(parseQwenXmlCalls(body, closed, true));
      break;
    case "minimax":
      parsed = wrap(parseMinimaxCalls(spec.closeInBody && closed ? body + spec.close[0] : body, closed));
      break;
    case "minimax-m3":
      parsed = wrap(parseMinimaxM3Calls(body, closed));
      break;
    case "dsml":
      parsed = wrap(parseInvokeCalls(body, closed, "｜DSML｜"));
      break;
    case "atem":
      parsed = wrap(parseInvokeCalls(body, closed, "atem:"));
      break;
    case "kimi-k3":
      parsed = wrap(parseKimiK3Calls(body, closed));
      break;
    case "deepseek":
      parsed = wrap(parseDeepSeekCalls(body));
      break;
    case "kimi":
      parsed = wrap(parseKimiCalls(body));
      break;
    case "hunyuan":
      parsed = wrap(parseHunyuanCalls(body, closed));
      break;
    case "solar":
      parsed = wrap(parseSolarCalls(body));
      break;
    case "gemma":
      parsed = wrap(parseGemmaCalls(body));
      break;
    case "mistral":
      parsed = wrap(parseMistralCalls(body, tools));
      break;
    case "named-json":
      parsed = wrap(namedJsonCall(spec.name ?? "", body));
      break;
    case "function-tag": {
      const name = spec.name ?? "";
      if (/^\s*[{"]/.test(body)) parsed = wrap(namedJsonCall(name, body));
      // MiniCPM 5 writes `<param name="KEY">`, Qwen3-Coder (without its <tool_call>) `<parameter=KEY>`.
      else if (/<param\s+name\s*=/.test(body)) parsed = wrap(parseMiniCpmParameters(name, body, closed));
      else parsed = wrap(parseQwenXmlParameters(name, body, closed));
      break;
    }
    case "fence":
      parsed = null;
      break;
  }
  if (parsed && spec.close.length > 0 && !closed && !spec.optionalClose) {
    for (const c of parsed.calls) {
      if (!c.problems.some((p) => p.code === "truncated" || p.code === "missing_closing_tag")) {
        c.problems.push(problem("missing_closing_tag", `the closing ${spec.close[0]} is missing`));
      }
    }
  }
  return parsed;
}
