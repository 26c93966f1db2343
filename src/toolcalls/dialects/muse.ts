// Muse Glimmer: harmony's message headers (harmony.ts) around MiniMax-M2's invoke tags in the
// `atem:` namespace (minimax.ts reads them): <atem:function_calls><atem:invoke name="NAME">
// <atem:parameter name="KEY">VALUE</atem:parameter></atem:invoke></atem:function_calls>.

import type { RegionParser } from "./candidate.ts";
import { callsOf, region, type Dialect } from "./dialect.ts";
import { parseInvokeCalls } from "./minimax.ts";

const atemRegion: RegionParser = (body, closed) => callsOf(parseInvokeCalls(body, closed, "atem:"));

export const muse: Dialect = {
  name: "Muse Glimmer",
  calls: [["<atem:function_calls>", region(atemRegion, ["</atem:function_calls>"], { valueStart: undefined })]],
};
