// Every call-opening marker (the tables' CALL_MARKERS and the openers read by their own rules) fed
// hostile text: each answered within the work budget, one-shot and streamed.

import { CALL_MARKERS } from "../../../src/toolcalls/dialects/marker-table.ts";
import { RULE_OPENERS } from "./hostile-text.ts";
import { markerSuite } from "./marker-suite.ts";

// One-shot climbs to 128 KB for every case: a cliff past 32 KB (a cap or a fallback in a call
// parser) shows no trend below it (budget.ts).
markerSuite("call markers", [...new Set([...CALL_MARKERS.map(([m]) => m), ...RULE_OPENERS])], undefined, ["one-shot"]);
