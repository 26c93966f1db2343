// InternLM2: <|action_start|><|plugin|>\n{"name": …, "parameters": …}<|action_end|>, the plugin
// channel named before the JSON (json.ts's parser skips it).

import { afterPrefix, region, type Dialect } from "./dialect.ts";
import { jsonRegion } from "./json.ts";

export const internlm: Dialect = {
  name: "InternLM2",
  calls: [["<|action_start|>", region(jsonRegion, ["<|action_end|>"], { valueStart: afterPrefix("<|plugin|>") })]],
  innerTokens: ["<|plugin|>"],
};
