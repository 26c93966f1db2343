// Every other marker the rewriter reads (reasoning blocks, framing tokens, stray closers, the tokens
// inside call regions) fed hostile text: each answered within the work budget, one-shot and streamed.

import { CALL_MARKERS } from "../../../src/toolcalls/dialects/marker-table.ts";
import { ALL_MARKERS, FAMILIES, RULE_OPENERS } from "./hostile-text.ts";
import { markerSuite } from "./marker-suite.ts";

const calls = new Set([...CALL_MARKERS.map(([m]) => m), ...RULE_OPENERS]);
// Nested brackets after a marker that opens no call are nested brackets after text (floods.test.ts
// has those): one bracket family is enough here, and keeps the suite's time for CI.
const families = Object.keys(FAMILIES).filter((f) => f !== "then nested [" && f !== "then nested {");
markerSuite("other markers", ALL_MARKERS.filter((m) => !calls.has(m)), families);
