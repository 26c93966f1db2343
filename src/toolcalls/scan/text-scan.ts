// Small scans over the text the stream rewriter holds: whitespace, a marker's possible start at the
// end of what has arrived, the closing fence of a code block.

export const isSpace = (c: string | undefined): boolean => c === " " || c === "\n" || c === "\t" || c === "\r";

/** Longest suffix of `text` (from `from` on) that is a proper prefix of `marker`. */
export function heldSuffix(text: string, from: number, marker: string): number {
  const first = marker.charCodeAt(0);
  for (let n = Math.min(marker.length - 1, text.length - from); n > 0; n--) {
    // Only a suffix that starts with the marker's first character can be its prefix (no slice otherwise).
    if (text.charCodeAt(text.length - n) === first && marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/**
 * The closing ``` of a code fence: three backticks not followed by a word character (that would
 * open a fence with a language). "wait" when the text ends right after them.
 */
export function findFenceClose(
  text: { indexOf(s: string, from: number): number; charAt(i: number): string; length: number },
  from: number,
  eof: boolean,
): number | "wait" | null {
  for (let i = text.indexOf("```", from); i >= 0; i = text.indexOf("```", i + 3)) {
    if (i + 3 >= text.length) return eof ? i : "wait";
    if (!/\w/.test(text.charAt(i + 3))) return i;
  }
  return null;
}

/**
 * The first of `close` (consumed with the block) or `ends` (which end it and are read next) in
 * `buf` from `from` on: where it is, and how much of it the block consumes.
 */
export function firstMarker(buf: string, from: number, close: readonly string[], ends: readonly string[]): { at: number; length: number } | null {
  let best: { at: number; length: number } | null = null;
  for (const m of close) {
    const at = buf.indexOf(m, from);
    if (at >= 0 && (!best || at < best.at)) best = { at, length: m.length };
  }
  for (const m of ends) {
    const at = buf.indexOf(m, from);
    if (at >= 0 && (!best || at < best.at)) best = { at, length: 0 };
  }
  return best;
}
