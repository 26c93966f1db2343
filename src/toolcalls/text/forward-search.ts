// Searches over one text that only ever move forward, each resuming where the last one stopped:
// what keeps a parser that looks for a closing tag once per opening tag linear in its input
// (40,000 `<function=a>` with no `</function>` would otherwise scan to the end 40,000 times).

/** A search for non-decreasing `from`s that answers from its last result whenever that still holds. */
abstract class ResumingSearch {
  private lastFrom = -1;
  private lastHit = -1;

  /** The first hit at or after `from`, or -1. */
  protected abstract find(from: number): number;

  next(from: number): number {
    // The last search started at or before `from` and found nothing, or found something at or
    // after `from`: that is still the first occurrence from `from` on.
    if (this.lastFrom >= 0 && from >= this.lastFrom && (this.lastHit < 0 || this.lastHit >= from)) return this.lastHit;
    this.lastFrom = from;
    this.lastHit = this.find(from);
    return this.lastHit;
  }
}

/** `text.indexOf(needle, from)` for non-decreasing `from`: a search is never repeated. */
export class ForwardSearch extends ResumingSearch {
  constructor(
    private readonly text: string,
    private readonly needle: string,
  ) {
    super();
  }

  protected find(from: number): number {
    return this.text.indexOf(this.needle, from);
  }
}

/** The first index from `from` on whose character is one of `chars`, for non-decreasing `from`. */
export class ForwardCharSearch extends ResumingSearch {
  constructor(
    private readonly text: string,
    private readonly chars: string,
  ) {
    super();
  }

  protected find(from: number): number {
    const { text, chars } = this;
    let i = from;
    while (i < text.length && !chars.includes(text[i]!)) i++;
    return i < text.length ? i : -1;
  }
}

/** Exactly the characters of a regular expression's `\s`. */
export function isRegexSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The index after the run of `\s` characters starting at `from`. */
export function skipRegexSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isRegexSpace(text.charCodeAt(i))) i++;
  return i;
}
