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

  /** What to send for `text`: "" while all of it is whitespace that may still be dropped. */
  take(text: string): string {
    const s = this.pending + text;
    let end = s.length;
    while (end > 0 && isSpace(s[end - 1])) end--;
    if (end === 0) {
      this.pending = this.inPart ? s : "";
      return "";
    }
    let start = 0;
    let prefix = "";
    if (!this.inPart) {
      while (start < end && isSpace(s[start])) start++;
      if (this.parts > 0) prefix = this.joiner;
      this.parts++;
      this.inPart = true;
    }
    this.pending = s.slice(end);
    return prefix + s.slice(start, end);
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
