// Finds where a bracketed value ends, one chunk at a time, so a stream never rescans what it has
// already seen. It counts (, [ and { against ), ] and } and skips quoted strings in either quote
// style (Python literals use single quotes); it does not check that the brackets match.

import { TextRope, type CharSource } from "./text-rope.ts";

export class BalancedScanner {
  private depth = 0;
  private quote = 0;
  private escaped = false;
  private opened = false;
  /** Next index of the text to look at. */
  pos: number;

  constructor(start: number) {
    this.pos = start;
  }

  /** True while inside an open string or bracket: the text so far is a cut-off value. */
  get open(): boolean {
    return this.depth > 0 || this.quote !== 0;
  }

  /**
   * Scans `text` from `pos` to its current end. Returns the index just after the bracket that
   * closes the first top-level value, or -1 when the text ends first.
   */
  scan(text: CharSource): number {
    let { depth, quote, escaped, opened } = this;
    let p = this.pos;
    const n = text.length;
    // Read a rope chunk by chunk, straight from its strings.
    let s: CharSource = text;
    let shift = 0;
    let segmentEnd = n;
    for (; p < n; p++) {
      if (p >= segmentEnd || (s === text && text instanceof TextRope)) {
        if (text instanceof TextRope) {
          const chunk = text.chunkAt(p);
          s = chunk.text;
          shift = chunk.start - chunk.offset;
          segmentEnd = chunk.start + chunk.length;
        }
      }
      const c = s.charCodeAt(p - shift);
      if (quote) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true;
        else if (c === quote) quote = 0;
        continue;
      }
      if (c === 34 || c === 39) quote = c;
      else if (c === 123 || c === 91 || c === 40) {
        depth++;
        opened = true;
      } else if (c === 125 || c === 93 || c === 41) {
        depth--;
        if (depth <= 0 && opened) {
          this.depth = 0;
          this.quote = 0;
          this.escaped = false;
          this.opened = false;
          this.pos = p + 1;
          return p + 1;
        }
      }
    }
    Object.assign(this, { depth, quote, escaped, opened });
    this.pos = p;
    return -1;
  }
}

/** Whether `text` stops inside a string or an open bracket. */
export function isCutOff(text: string): boolean {
  const s = new BalancedScanner(0);
  let end = s.scan(text);
  while (end >= 0 && end < text.length) end = s.scan(text);
  return s.open;
}
