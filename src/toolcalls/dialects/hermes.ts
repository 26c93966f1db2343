// Hermes 2/3, Qwen 2.5/3, Bielik v3: <tool_call>{"name": …, "arguments": {…}}</tool_call>, one
// block per call. Qwen3-Coder (qwen3-coder.ts), GLM (glm.ts) and others write their own bodies
// inside the same tag, so the body is read by what it holds (auto-body.ts); `<xml>` wraps the same.

import { autoRegion } from "./auto-body.ts";
import { region, type Dialect } from "./dialect.ts";

export const hermes: Dialect = {
  name: "Hermes, Qwen 2.5/3, Bielik (and the bodies others write in <tool_call>)",
  calls: [
    ["<tool_call>", region(autoRegion, ["</tool_call>"])],
    ["<xml>", region(autoRegion, ["</xml>"])],
  ],
};
