// Llama 3.x: JSON after <|python_tag|> (or bare, json.ts), built-in tools as `brave_search.call(…)`,
// the call ended by <|eom_id|> or <|eot_id|>, often left out; Llama 4: <|python_start|>…<|python_end|>
// around pythonic calls (pythonic.ts). The body is read by what it holds (auto-body.ts).

import { autoRegion } from "./auto-body.ts";
import { drop, region, type Dialect } from "./dialect.ts";

export const llama: Dialect = {
  name: "Llama 3.x, Llama 4",
  calls: [
    ["<|python_start|>", region(autoRegion, ["<|python_end|>"], { valueStart: undefined })],
    ["<|python_tag|>", region(autoRegion, ["<|eom_id|>", "<|eot_id|>"], { multi: false, optionalClose: true })],
  ],
  blocks: [
    ["<|eot_id|>", drop],
    ["<|eom_id|>", drop],
  ],
};
