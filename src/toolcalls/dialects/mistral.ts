// Mistral: [TOOL_CALLS] then a JSON array (before v11) or NAME[CALL_ID]ID[ARGS]{…} per call (v11+,
// also NAME{…}); Magistral's reasoning in [THINK]…[/THINK]. The id is the model's own and not reused.

import type { RegionParser } from "./candidate.ts";
import { callsOf, reasoning, region, strayClose, type Dialect } from "./dialect.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import { parseJsonBody } from "../parse/parse-json-body.ts";
import type { RawCall } from "../scoring/raw-call.ts";
import type { ToolSet } from "../scoring/tool-set.ts";
import { isRegexSpace, skipRegexSpace } from "../text/forward-search.ts";

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

const mistralRegion: RegionParser = (body, _closed, _spec, tools) => callsOf(parseMistralCalls(body, tools));

/** v11: NAME[CALL_ID]ID[ARGS]{…}; the brackets of [ARGS] are not the value. */
const mistralStart = (body: string, eof: boolean): number => {
  for (let i = 0; i < body.length; i++) {
    for (const tag of ["[ARGS]", "[CALL_ID]"]) {
      if (body.startsWith(tag, i)) {
        i += tag.length - 1;
        break;
      }
      if (!eof && body.length - i < tag.length && tag.startsWith(body.slice(i))) return -1;
    }
    const c = body[i];
    if (c === "{") return i;
    if (c === "[" && !body.startsWith("[ARGS]", i) && !body.startsWith("[CALL_ID]", i)) return i;
  }
  return -1;
};

export const mistral: Dialect = {
  name: "Mistral, Magistral",
  calls: [["[TOOL_CALLS]", region(mistralRegion, [], { valueStart: mistralStart, multi: false })]],
  blocks: [
    ["[THINK]", reasoning("[/THINK]")],
    ["[/THINK]", strayClose],
  ],
  innerTokens: ["[ARGS]", "[CALL_ID]"],
};
