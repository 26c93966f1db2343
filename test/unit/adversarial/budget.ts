// The work budget of the adversarial suite (issue 26): a hostile input must be answered within a
// fixed allowance plus a per-KB one, never a tight wall-clock assert. Each case climbs a ladder of
// sizes and stops at the first size over budget, so a quadratic or cubic parser fails fast (its cost
// at the next size is bounded by 16–64× a budget it just met) instead of blocking workerd for hours.
//
// Time for CI (the suite runs on every push, on 2 cores): climbing every marker × family × mode to
// 128 KB took 2–4 minutes, most of it in the 128 KB steps of cases that were cheap and linear at
// 32 KB. So a ladder's top sizes can be conditional (`climb`'s `alwaysUpTo`): such a size is run only
// when the step below says the case could fail there (`mayFailAt`): either the cost grew
// superlinearly over the last step (more than ×6 for ×4 the size; linear is ×4, quadratic ×16) and a
// cubic growth from here would break the next budget, or even a quadratic growth would (the case is
// already dear). A quadratic parser therefore still climbs to the size that fails it: at 32 KB it is
// already ~16× its 8 KB cost. What a conditional step can miss is a cliff with no trend below it (a
// cap or a fallback that switches on past 32 KB), so the suites keep the whole ladder where that
// matters: one-shot for every call marker (marker-suite.ts), every mode for the findings, floods and
// schemas. The normal-input baseline is measured once per test file (climb-cases.ts).

/** The fixed allowance of every case (start-up, a GC pause, a loaded machine). */
export const FIXED_MS = 200;
/** The per-KB allowance floor: 50 ms per 100 KB. */
export const MS_PER_KB = 0.5;
/** How many times a normal input's cost per KB a hostile one may take before it is over budget. */
export const NORMAL_FACTOR = 5;

/** Sizes (characters) a case climbs: ×4 a step, so a linear cost grows 4×, a quadratic one 16×. */
export const LADDER = [2_000, 8_000, 32_000, 128_000] as const;
/** The ladder for one-character pieces, whose fixed cost per piece is far above a longer piece's. */
export const LADDER_1 = [2_000, 8_000, 32_000] as const;
/** How many sizes of a ladder are always climbed when the top ones are conditional (up to 32 KB; 8 KB in 1-character pieces). */
export const ALWAYS_UP_TO = 3;
export const ALWAYS_UP_TO_1 = 2;

/** Growth over a step, per the step's growth in size, above which the cost is superlinear (×6 for ×4). */
export const SUPERLINEAR = 1.5;

/**
 * The budget for `chars` of input: the fixed allowance plus, per KB, the larger of the floor and
 * NORMAL_FACTOR × what a normal input of the same kind costs per KB on this machine right now (so a
 * slow or loaded machine raises the allowance with the normal cost, and only superlinear work fails).
 */
export function budgetMs(chars: number, normalMsPerKb = 0): number {
  return FIXED_MS + (chars / 1000) * Math.max(MS_PER_KB, NORMAL_FACTOR * normalMsPerKb);
}

export interface Step {
  chars: number;
  ms: number;
  budget: number;
}

/**
 * What a climb measured, for an assertion message a parser owner can act on: each size's time and
 * budget, and how the time grew over the last step (×4 is linear, ×16 quadratic).
 */
export function describeSteps(steps: readonly Step[]): string {
  const size = (chars: number) => (chars >= 1000 ? `${Math.round(chars / 1000)} KB` : `${chars} B`);
  const sizes = steps.map((s) => `${size(s.chars)}: ${Math.round(s.ms)} ms (budget ${Math.round(s.budget)})`).join(", ");
  const [a, b] = steps.slice(-2);
  return a && b && a.ms >= 5 && b.chars >= 1.5 * a.chars ? `${sizes}; ×${(b.ms / a.ms).toFixed(1)} for ×${(b.chars / a.chars).toFixed(0)} the size` : sizes;
}

/** The step that broke the budget, if one did (always the last: the climb stops there). */
export const overBudget = (steps: readonly Step[]): Step | undefined => steps.find((s) => s.ms > s.budget);

/**
 * Whether the case could break the budget at `nextChars`, judged from its last two steps (see the
 * top of this file): a superlinear trend that a cubic growth would carry over the next budget, or
 * a cost that even a quadratic growth would.
 */
export function mayFailAt(steps: readonly Step[], nextChars: number, normalMsPerKb = 0): boolean {
  const [a, b] = steps.slice(-2);
  if (!a || !b) return true;
  const next = budgetMs(nextChars, normalMsPerKb);
  const scale = nextChars / b.chars;
  const superlinear = b.ms > SUPERLINEAR * (b.chars / a.chars) * a.ms;
  return b.ms * scale ** 2 > next || (superlinear && b.ms * scale ** 3 > next);
}

const timed = (run: () => void): number => {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
};

/**
 * Runs `run(size)` (synchronous work) at each size of `ladder`, stopping at the first over budget;
 * `size` is the input's length in characters unless `charsOf` says how long the input of a size is.
 * The sizes past the first `alwaysUpTo` run only where the case could fail there (mayFailAt).
 * A size over budget is run once more and the faster run counts: a GC pause or a neighbour's burst
 * on a loaded machine is not the parser's cost.
 */
export function climb(
  ladder: readonly number[],
  run: (size: number) => void,
  normalMsPerKb = 0,
  charsOf = (size: number) => size,
  alwaysUpTo = ladder.length,
): Step[] {
  const steps: Step[] = [];
  for (const [i, size] of ladder.entries()) {
    const chars = charsOf(size);
    if (i >= alwaysUpTo && !mayFailAt(steps, chars, normalMsPerKb)) break;
    const budget = budgetMs(chars, normalMsPerKb);
    let ms = timed(() => run(size));
    if (ms > budget && ms < 4 * budget) ms = Math.min(ms, timed(() => run(size)));
    const step = { chars, ms, budget };
    steps.push(step);
    if (step.ms > step.budget) break;
  }
  return steps;
}

/** The median of `n` timed runs of `run`, after one warm-up (the JIT's first pass is not the cost). */
export function medianMs(run: () => void, n = 3): number {
  run();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}
