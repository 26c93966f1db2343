// How deep objects and arrays nest in a parsed JSON value, measured without recursion: a client can
// send a value nested 100,000 deep (4 MB of `[`), which a recursive walk would overflow the stack on.

/**
 * How deep objects and arrays nest in `value` (1 for a flat object or array, 0 for a scalar). The
 * walk stops as soon as it passes `limit`, so it visits each value at most once and answers
 * `limit + 1` for anything deeper: linear in the value's size, with an explicit stack.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return deepest;
}
