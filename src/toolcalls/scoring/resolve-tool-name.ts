// Maps the name a model wrote to a declared tool: exact, then ignoring case and the separators
// `.`, `_` and `-`, then the closest name by normalized edit distance. Anything else is a
// hallucinated tool and must not become a call.

import { MAX_FUZZY_NAME_CELLS, MAX_TOOL_NAME_LENGTH } from "../../schemas/tool-limits.ts";
import { problem } from "./problems.ts";
import type { ToolCallProblem } from "./types.ts";

export interface NameMatch<T> {
  tool: T;
  problems: ToolCallProblem[];
  fuzzy: boolean;
}

/** Minimum similarity (1 − distance / longer length) for a fuzzy match. */
export const FUZZY_THRESHOLD = 0.8;
const MIN_FUZZY_LENGTH = 5;

export const foldName = (name: string): string => name.toLowerCase().replace(/[._\-\s]/g, "");
const stripSeparators = (name: string): string => name.replace(/[._\-\s]/g, "");
const unifySeparators = (name: string): string => name.replace(/[.\-]/g, "_");

/** What is left of a request's fuzzy matching, in edit-distance cells (shared by its calls). */
export interface FuzzyBudget {
  cells: number;
}

export function resolveToolName<T extends { name: string; folded: string }>(
  written: string,
  tools: readonly T[],
  allowFuzzy: boolean,
  budget: FuzzyBudget = { cells: MAX_FUZZY_NAME_CELLS },
): NameMatch<T> | null {
  const name = written.trim();
  if (name === "") return null;
  const exact = tools.find((t) => t.name === name);
  if (exact) return { tool: exact, problems: [], fuzzy: false };

  const folded = foldName(name);
  const same = tools.filter((t) => t.folded === folded);
  if (same.length > 0) {
    const tool = same.find((t) => unifySeparators(t.name) === unifySeparators(name)) ?? same[0]!;
    const problems: ToolCallProblem[] = [];
    if (stripSeparators(tool.name) !== stripSeparators(name)) {
      problems.push(problem("name_case_mismatch", `"${name}" differs from the declared "${tool.name}" in case`));
    }
    if (tool.name.toLowerCase() !== name.toLowerCase()) {
      problems.push(
        problem("name_separator_mismatch", `"${name}" differs from the declared "${tool.name}" in separators`),
      );
    }
    return { tool, problems, fuzzy: false };
  }

  // A name longer than any declared name can be is a hallucination, never a near miss: it is not
  // compared letter by letter (an unbounded edit distance per tool was quadratic in its length).
  if (!allowFuzzy || folded.length < MIN_FUZZY_LENGTH || folded.length > MAX_TOOL_NAME_LENGTH) return null;
  let best: T | null = null;
  let bestSimilarity = 0;
  let tie = false;
  for (const t of tools) {
    if (t.folded.length > MAX_TOOL_NAME_LENGTH) continue;
    const longer = Math.max(t.folded.length, folded.length);
    // Only a distance that can still reach the threshold is worth computing (one more for rounding);
    // candidates below it never decide the answer, so they are skipped.
    const within = Math.ceil((1 - FUZZY_THRESHOLD) * longer) + 1;
    // Many long near-miss names against many tools would still add up: past the request's budget
    // no name is matched fuzzily any more (it stays unknown, as a hallucinated name does).
    budget.cells -= t.folded.length * (2 * within + 1);
    if (budget.cells < 0) return null;
    const distance = editDistanceWithin(t.folded, folded, within);
    if (distance > within) continue;
    const similarity = 1 - distance / longer;
    if (similarity < FUZZY_THRESHOLD) continue;
    if (similarity > bestSimilarity) {
      best = t;
      bestSimilarity = similarity;
      tie = false;
    } else if (similarity === bestSimilarity) tie = true;
  }
  if (!best || tie || bestSimilarity < FUZZY_THRESHOLD) return null;
  return {
    tool: best,
    fuzzy: true,
    problems: [
      problem(
        "name_fuzzy_match",
        `"${name}" is not declared; closest declared tool "${best.name}" (similarity ${bestSimilarity.toFixed(2)})`,
      ),
    ],
  };
}

/**
 * The edit distance of `a` and `b` when it is at most `limit`, else `limit + 1`: only the band of
 * cells within `limit` of the diagonal is computed, and it stops as soon as a whole row exceeds it,
 * so the work is at most (2·limit + 1) cells per letter of `a`.
 */
export function editDistanceWithin(a: string, b: string, limit: number): number {
  const over = limit + 1;
  if (Math.abs(a.length - b.length) > limit) return over;
  let prev = new Int32Array(b.length + 2).fill(over);
  let row = new Int32Array(b.length + 2).fill(over);
  for (let j = 0; j <= Math.min(b.length, limit); j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const lo = Math.max(1, i - limit);
    const hi = Math.min(b.length, i + limit);
    row[lo - 1] = lo === 1 && i <= limit ? i : over;
    let rowMin = row[lo - 1]!;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost, over);
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (hi + 1 <= b.length) row[hi + 1] = over;
    if (rowMin > limit) return over;
    [prev, row] = [row, prev];
  }
  return Math.min(prev[b.length]!, over);
}
