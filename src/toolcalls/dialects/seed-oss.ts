// Seed-OSS (ByteDance): Qwen3-Coder's <function=NAME><parameter=KEY> inside <seed:tool_call>, each
// value written alone (no newline of the format around it), reasoning in <seed:think>.

import type { RegionParser } from "./candidate.ts";
import { callsOf, reasoning, region, strayClose, type Dialect } from "./dialect.ts";
import { parseQwenXmlCalls } from "./qwen3-coder.ts";

const seedRegion: RegionParser = (body, closed) => callsOf(parseQwenXmlCalls(body, closed, true));

export const seedOss: Dialect = {
  name: "Seed-OSS",
  calls: [["<seed:tool_call>", region(seedRegion, ["</seed:tool_call>"], { valueStart: undefined })]],
  blocks: [
    ["<seed:think>", reasoning("</seed:think>")],
    ["</seed:think>", strayClose],
  ],
};
