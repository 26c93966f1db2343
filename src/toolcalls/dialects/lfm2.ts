// LFM2 (Liquid): <|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>, pythonic calls or
// JSON (auto-body.ts). It may write the list again after the closing token: the scanner drops an
// echo of the block just closed (scan/region-mode.ts).

import { autoRegion } from "./auto-body.ts";
import { region, type Dialect } from "./dialect.ts";

export const lfm2: Dialect = {
  name: "LFM2",
  calls: [["<|tool_call_start|>", region(autoRegion, ["<|tool_call_end|>"], { valueStart: undefined })]],
};
