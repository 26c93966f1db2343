// Runs named hostile inputs through the rewriter in every mode, each climbing the ladder within the
// work budget (budget.ts): the shared body of the family test files.

import { beforeAll, expect, it } from "vitest";
import type { ToolDefinition } from "../toolcalls/imports.ts";
import { ALWAYS_UP_TO, ALWAYS_UP_TO_1, climb, describeSteps, LADDER, LADDER_1, medianMs, overBudget } from "./budget.ts";
import { MODES, normalMsPerKb, rewrite, type Mode } from "./hostile-text.ts";

export interface HostileCase {
  /** The text of about `chars` characters. */
  text: (chars: number) => string;
  /** The tools the request declared (default: the toolcalls fixtures' four). */
  tools?: readonly ToolDefinition[];
  /** Stream it one character at a time too (default: yes). */
  oneChar?: boolean;
}

export interface ClimbOptions {
  /**
   * The modes that always climb the whole ladder; the others climb its top sizes only where the
   * case could fail there (budget.ts, mayFailAt). Default: every mode.
   */
  fullLadder?: readonly Mode[];
}

/**
 * What a normal input costs per KB in each mode, measured once per test file (a module is
 * evaluated once per file): every describe of the file shares it.
 */
const normal = new Map<Mode, number>();

/** One test per case: in each mode, every size of the ladder within budget. */
export function climbCases(cases: Record<string, HostileCase>, options: ClimbOptions = {}): void {
  const full = new Set(options.fullLadder ?? MODES);
  beforeAll(() => {
    for (const mode of MODES) if (!normal.has(mode)) normal.set(mode, normalMsPerKb(mode, medianMs));
  });
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      const failures: string[] = [];
      for (const mode of MODES) {
        if (mode === "1-char pieces" && c.oneChar === false) continue;
        const [ladder, always] = mode === "1-char pieces" ? [LADDER_1, ALWAYS_UP_TO_1] : [LADDER, ALWAYS_UP_TO];
        const steps = climb(ladder, (chars) => rewrite(c.text(chars), mode, c.tools), normal.get(mode), undefined, full.has(mode) ? ladder.length : always);
        if (overBudget(steps)) failures.push(`${mode}: ${describeSteps(steps)}`);
      }
      expect(failures, failures.join("; ")).toEqual([]);
    });
  }
}
