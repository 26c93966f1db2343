// Maps the name a model wrote to a declared tool: exact, then ignoring case and the separators
// `.`, `_` and `-`, then the closest name by normalized edit distance. Anything else is a
// hallucinated tool and must not become a call.

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

export function resolveToolName<T extends { name: string; folded: string }>(
  written: string,
  tools: readonly T[],
  allowFuzzy: boolean,
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

  if (!allowFuzzy || folded.length < MIN_FUZZY_LENGTH) return null;
  let best: T | null = null;
  let bestSimilarity = 0;
  let tie = false;
  for (const t of tools) {
    const longer = Math.max(t.folded.length, folded.length);
    // Cheap bound: the length difference alone already rules it out.
    if (1 - Math.abs(t.folded.length - folded.length) / longer < FUZZY_THRESHOLD) continue;
    const similarity = 1 - editDistance(t.folded, folded) / longer;
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

export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = row;
  }
  return prev[b.length]!;
}
