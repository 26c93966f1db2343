// The bytes of a response body waiting to be written, appended in one growing buffer so a
// streamed token's frame costs no new buffer or string concatenation.
const FIRST_SLAB = 4 * 1024;
const MAX_SLAB = 64 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const utf8 = new TextEncoder();

/**
 * A response body's bytes not yet written, built in place: frames are appended to one buffer
 * (UTF-8 text, constant byte strings, JSON string literals) and taken as one view when the body can
 * take them. Per frame this avoids a new buffer from `TextEncoder.encode`, the string
 * concatenation of frames waiting behind a write, and — for the common frame, constant bytes around
 * one short token — encoding the constant part again. Buffers start small (a short answer needs
 * little) and double up to 64 KiB; a taken view is never written again, so a consumer may hold it.
 */
export class ByteQueue {
  private slab = new Uint8Array(FIRST_SLAB);
  private start = 0;
  private used = 0;

  /** Bytes appended and not yet taken. */
  get size(): number {
    return this.used - this.start;
  }

  /** Appends `text` as UTF-8 (lone surrogates as U+FFFD, as TextEncoder does). */
  text(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8.
    const worst = text.length * 3;
    if (worst > MAX_SLAB / 4) return this.bytes(utf8.encode(text));
    this.reserve(worst);
    this.used += utf8.encodeInto(text, this.slab.subarray(this.used)).written;
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.slab.set(bytes, this.used);
    this.used += bytes.length;
  }

  /**
   * Appends `before`, `JSON.stringify(value)` and `after` (a frame around one string) with one check
   * for room: printable ASCII is copied as is, anything else goes through JSON.stringify.
   */
  jsonStringBetween(before: Uint8Array, value: string, after: Uint8Array): void {
    this.reserve(before.length + value.length + 2 + after.length);
    this.slab.set(before, this.used);
    this.used += before.length;
    if (!this.asciiLiteral(value)) this.text(JSON.stringify(value));
    this.bytes(after);
  }

  /** Writes `value` as a JSON string if it is printable ASCII (room already reserved); false, and nothing written, otherwise. */
  private asciiLiteral(value: string): boolean {
    const n = value.length;
    const slab = this.slab;
    let at = this.used;
    slab[at++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      // Nothing is committed until the closing quote: bailing out leaves the queue as it was.
      if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH) return false;
      slab[at++] = c;
    }
    slab[at++] = QUOTE;
    this.used = at;
    return true;
  }

  /** Everything appended since the last take, as one view (null when nothing was). */
  take(): Uint8Array | null {
    if (this.used === this.start) return null;
    const view = this.slab.subarray(this.start, this.used);
    this.start = this.used;
    return view;
  }

  /** Makes room for `n` more bytes; what is pending moves to the new buffer, taken views stay where they are. */
  private reserve(n: number): void {
    if (this.slab.length - this.used >= n) return;
    const pending = this.used - this.start;
    // Twice what is needed, so a queue that keeps growing (a slow client) is not copied per frame.
    const next = new Uint8Array(Math.max(Math.min(MAX_SLAB, this.slab.length * 2), 2 * (pending + n)));
    if (pending > 0) next.set(this.slab.subarray(this.start, this.used));
    this.slab = next;
    this.start = 0;
    this.used = pending;
  }
}
