// Hunyuan v3 (Hy3): GLM's layout (glm.ts) in its own `:opensource` tags, the name ended by
// <tool_sep:opensource>: <tool_call:opensource>NAME<tool_sep:opensource>\n<arg_key:opensource>KEY
// </arg_key:opensource>\n<arg_value:opensource>VALUE</arg_value:opensource>…</tool_call:opensource>,
// several inside <tool_calls:opensource>; reasoning in <think:opensource>.

import type { RegionParser } from "./candidate.ts";
import { callsOf, reasoning, region, strayClose, type Dialect } from "./dialect.ts";
import { glmCallText, glmTags } from "./glm.ts";
import { toCalls, type CallText } from "../parse/tagged-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";

const HY = ":opensource";
const HY_CALL = `<tool_call${HY}>`;
const HY_CALL_CLOSE = `</tool_call${HY}>`;
const HY_TAGS = glmTags(HY, `<tool_sep${HY}>`);

/**
 * Hunyuan v3: `<tool_call:opensource>NAME<tool_sep:opensource>\n<arg_key:opensource>KEY</arg_key:opensource>\n
 * <arg_value:opensource>VALUE</arg_value:opensource>\n…</tool_call:opensource>`, several inside
 * `<tool_calls:opensource>`, or the body of one `<tool_call:opensource>` region. Values are written
 * alone (a newline after `</arg_value:opensource>` is the format's, one inside is the value's).
 */
export function parseHunyuanCalls(body: string, regionClosed: boolean): RawCall[] | null {
  const parts = body.includes(HY_CALL) ? body.split(HY_CALL).slice(1) : [body];
  const list: CallText[] = [];
  for (const part of parts) {
    const end = part.indexOf(HY_CALL_CLOSE);
    const call = glmCallText(end < 0 ? part : part.slice(0, end), HY_TAGS);
    if (!call) return null;
    list.push({ ...call, closed: end >= 0 || (parts.length === 1 && regionClosed) });
  }
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}

const hunyuanRegion: RegionParser = (body, closed) => callsOf(parseHunyuanCalls(body, closed));

export const hunyuan: Dialect = {
  name: "Hunyuan v3",
  calls: [
    ["<tool_calls:opensource>", region(hunyuanRegion, ["</tool_calls:opensource>"], { valueStart: undefined })],
    ["<tool_call:opensource>", region(hunyuanRegion, ["</tool_call:opensource>"], { valueStart: undefined })],
  ],
  blocks: [
    ["<think:opensource>", reasoning("</think:opensource>")],
    ["</think:opensource>", strayClose],
  ],
  innerTokens: ["<tool_sep:opensource>"],
};
