// The text of a held region, kept as the chunks it arrived in. Appending a delta to one growing
// string makes V8 copy the whole string on the next read, so a long region fed in small deltas
// would cost quadratic time; the rope copies nothing until the region is complete.

/** A string, or a rope: text whose characters live in one or more strings. */
export interface CharSource {
  readonly length: number;
  charCodeAt(index: number): number;
}

export interface Chunk {
  text: string;
  /** Where this chunk's part starts in `text` (the first chunk may be a view into a larger string). */
  offset: number;
  /** Position of the chunk's first character in the rope. */
  start: number;
  length: number;
}

export class TextRope implements CharSource {
  private readonly chunks: Chunk[] = [];
  private cursor = 0;
  length = 0;

  /** A rope that starts as `text` from `offset` on, without copying it. */
  constructor(text = "", offset = 0) {
    if (text.length > offset) this.push(text, offset);
  }

  append(text: string): void {
    if (text.length > 0) this.push(text, 0);
  }

  private push(text: string, offset: number): void {
    const length = text.length - offset;
    this.chunks.push({ text, offset, start: this.length, length });
    this.length += length;
  }

  /**
   * The chunk that holds position `i` (0 ≤ i < length). Reads are mostly sequential, so the
   * cursor's chunk and the next are tried first; a jump is a binary search, never a walk over
   * every chunk (a region held in thousands of small deltas is read back and forth).
   */
  private locate(i: number): Chunk {
    const chunks = this.chunks;
    const holds = (k: number) => chunks[k]!.start <= i && i < chunks[k]!.start + chunks[k]!.length;
    let c = this.cursor;
    if (!holds(c)) {
      if (c + 1 < chunks.length && holds(c + 1)) c++;
      else {
        let lo = 0;
        let hi = chunks.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (chunks[mid]!.start <= i) lo = mid;
          else hi = mid - 1;
        }
        c = lo;
      }
    }
    this.cursor = c;
    return chunks[c]!;
  }

  /** The stored chunk that holds position `i`, for loops that read a whole chunk at a time. */
  chunkAt(i: number): Chunk {
    return this.locate(i);
  }

  charCodeAt(i: number): number {
    if (i < 0 || i >= this.length) return NaN;
    const c = this.locate(i);
    return c.text.charCodeAt(c.offset + i - c.start);
  }

  charAt(i: number): string {
    if (i < 0 || i >= this.length) return "";
    const c = this.locate(i);
    return c.text.charAt(c.offset + i - c.start);
  }

  slice(from: number, to = this.length): string {
    const a = Math.max(0, from);
    const b = Math.min(this.length, to);
    if (a >= b) return "";
    const first = this.locate(a);
    if (b <= first.start + first.length) {
      return first.text.slice(first.offset + a - first.start, first.offset + b - first.start);
    }
    let out = "";
    for (let k = this.cursor; k < this.chunks.length; k++) {
      const c = this.chunks[k]!;
      if (c.start >= b) break;
      out += c.text.slice(c.offset + Math.max(0, a - c.start), c.offset + Math.min(c.length, b - c.start));
    }
    return out;
  }

  startsWith(needle: string, at: number): boolean {
    return this.slice(at, at + needle.length) === needle;
  }

  indexOf(needle: string, from = 0): number {
    if (this.length === 0) return -1;
    this.locate(Math.max(0, Math.min(from, this.length - 1)));
    for (let k = this.cursor; k < this.chunks.length; k++) {
      const c = this.chunks[k]!;
      const local = Math.max(0, from - c.start);
      const i = c.text.indexOf(needle, c.offset + local);
      if (i >= 0 && i - c.offset + needle.length <= c.length) return c.start + i - c.offset;
      // A match that starts in this chunk and ends in a later one.
      const edge = Math.max(from, c.start + c.length - needle.length + 1);
      const j = this.slice(edge, c.start + c.length + needle.length - 1).indexOf(needle);
      if (j >= 0) return edge + j;
    }
    return -1;
  }

  /** The text from `from` on, as a string and a start offset, copying only when it spans chunks. */
  rest(from: number): { text: string; pos: number } {
    if (from >= this.length) return { text: "", pos: 0 };
    const c = this.locate(from);
    if (c === this.chunks[this.chunks.length - 1]) return { text: c.text, pos: c.offset + from - c.start };
    return { text: this.slice(from), pos: 0 };
  }
}
