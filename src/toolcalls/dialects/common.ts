// Markers many families write: `<think>…</think>` (Qwen3, DeepSeek R1, GLM and most reasoning
// models; the closing tag alone when the template opened the block), `<|inner_prefix|>…
// <|inner_suffix|>`, and ChatML's end of turn.

import { drop, reasoning, strayClose, type Dialect } from "./dialect.ts";

export const common: Dialect = {
  name: "<think> reasoning, ChatML",
  blocks: [
    ["<think>", reasoning("</think>")],
    ["<|inner_prefix|>", reasoning("<|inner_suffix|>")],
    ["</think>", strayClose],
    ["<|im_end|>", drop],
  ],
};
