// One output channel (content or reasoning) as the reader gets it: text goes out as it comes, but
// whitespace at its end is held until visible text follows (and is dropped if none does), and
// whitespace at the start of a part is dropped. Content is one part; reasoning is a part per block,
// the parts joined by `joiner`. A prefilled message the output continues starts inside its part.

import { isSpace } from "./text-scan.ts";

export class TrimmedChannel {
  private pending = "";
  private inPart = false;
  private parts = 0;

  constructor(private readonly joiner: string) {}

  /** Something visible has been sent in the current part. */
  get started(): boolean {
    return this.inPart;
  }

  /**
   * What to send for `text`: "" while all of it is whitespace that may still be dropped. Only
   * `text` is looked at: what is pending is whitespace already, so a flood of it costs its length
   * once, however it is split.
   */
  take(text: string): string {
    let end = text.length;
    while (end > 0 && isSpace(text[end - 1])) end--;
    if (end === 0) {
      if (this.inPart) this.pending += text;
      return "";
    }
    let start = 0;
    let prefix = this.pending;
    if (!this.inPart) {
      // Nothing is pending outside a part: whitespace at its start is dropped.
      while (start < end && isSpace(text[start])) start++;
      prefix = this.parts > 0 ? this.joiner : "";
      this.parts++;
      this.inPart = true;
    }
    this.pending = text.slice(end);
    return prefix + text.slice(start, end);
  }

  /** The whitespace held back goes with what ended here (a call, a block's closing marker). */
  dropPending(): void {
    this.pending = "";
  }

  /** A new part begins (a reasoning block): its leading whitespace is dropped, a joiner comes first. */
  newPart(): void {
    this.inPart = false;
    this.pending = "";
  }

  /** The output continues a prefilled message: whitespace at its start is the message's. */
  continuePart(): void {
    this.inPart = true;
  }
}
