// OLMo 3: <function_calls>\nget_weather(city="Paris")\nget_time(tz="CET")\n</function_calls>, one
// pythonic call per line, or JSON (auto-body.ts).

import { autoRegion } from "./auto-body.ts";
import { region, type Dialect } from "./dialect.ts";

export const olmo: Dialect = {
  name: "OLMo 3",
  calls: [["<function_calls>", region(autoRegion, ["</function_calls>"], { valueStart: undefined })]],
};
