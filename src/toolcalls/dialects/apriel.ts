// Apriel 1.6: the prompt opens the reasoning with a sentence (prompt/prompt-state.ts) that
// `[BEGIN FINAL RESPONSE]` closes; the answer ends with `[END FINAL RESPONSE]`, dropped. Its calls
// are JSON in <tool_calls> (json.ts).

import { drop, strayClose, type Dialect } from "./dialect.ts";

export const apriel: Dialect = {
  name: "Apriel",
  blocks: [
    ["[BEGIN FINAL RESPONSE]", strayClose],
    ["[END FINAL RESPONSE]", drop],
  ],
};
