// One test per marker and hostile family (hostile-text.ts), in each way the text can arrive
// (one-shot, 16-character and 1-character pieces), each within the work budget (budget.ts). For
// CI's time, only the modes given climb the whole ladder; the others go to the top sizes only where
// a case could fail there (budget.ts, mayFailAt).

import { describe } from "vitest";
import { climbCases, type HostileCase } from "./climb-cases.ts";
import { FAMILIES, type Mode } from "./hostile-text.ts";

/** The families streamed one character at a time too: those a stream holds back on ("maybe"). */
const ONE_CHAR_FAMILIES = new Set(["then a whitespace flood", "then { and a whitespace flood", "then a flood of its own prefix"]);

/** `families`: the names of FAMILIES to run (default: all); `fullLadder`: the modes that always climb to the top. */
export function markerSuite(title: string, markers: readonly string[], families: readonly string[] = Object.keys(FAMILIES), fullLadder: readonly Mode[] = []): void {
  const cases: Record<string, HostileCase> = {};
  for (const marker of markers) {
    for (const [family, make] of Object.entries(FAMILIES)) {
      if (!families.includes(family)) continue;
      cases[`${JSON.stringify(marker)} ${family}`] = { text: (chars) => make(marker, chars), oneChar: ONE_CHAR_FAMILIES.has(family) };
    }
  }
  describe(title, () => climbCases(cases, { fullLadder }));
}
