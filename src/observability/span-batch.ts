// A batch of spans on its way to the collector, held as the UTF-8 bytes of its export body: each
// span's OTLP/JSON text is encoded into one growing buffer as it is queued, so a queued batch is one
// object on the heap rather than a string per span (each of them kept for up to a second, long enough
// for the garbage collector to move it), and the POST sends the bytes without joining or encoding.
import { exportEnvelope } from "./otlp-spans.ts";

const encoder = new TextEncoder();
const ENVELOPE = exportEnvelope();
const HEAD = encoder.encode(ENVELOPE.head);
const TAIL = encoder.encode(ENVELOPE.tail);
const COMMA = 0x2c;
/** The buffer starts this big and doubles as spans come (a span is about 1 KB). */
const FIRST_BYTES = 16 * 1024;

export class SpanBatch {
  /** The spans in the batch. */
  count = 0;
  private buf: Uint8Array;
  private used = HEAD.length;

  /** @param maxBytes the body's bound: a span that would take it past is refused (the next batch takes it). */
  constructor(private readonly maxBytes: number) {
    this.buf = new Uint8Array(Math.max(HEAD.length + TAIL.length, Math.min(FIRST_BYTES, maxBytes)));
    this.buf.set(HEAD);
  }

  /** Adds a span's OTLP/JSON text; false when it does not fit within the bound. */
  add(text: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for that is enough for any text.
    const worst = this.used + 1 + text.length * 3 + TAIL.length;
    if (worst > this.buf.length && !this.grow(worst)) return this.addExact(text);
    if (this.count) this.buf[this.used++] = COMMA;
    this.used += encoder.encodeInto(text, this.buf.subarray(this.used)).written;
    this.count++;
    return true;
  }

  /** The export body: the envelope around the spans. */
  body(): Uint8Array {
    const out = this.buf.subarray(0, this.used + TAIL.length);
    out.set(TAIL, this.used);
    return out;
  }

  private addExact(text: string): boolean {
    const start = this.used + (this.count ? 1 : 0);
    const room = this.buf.length - TAIL.length - start;
    if (room <= 0) return false;
    const { read, written } = encoder.encodeInto(text, this.buf.subarray(start, start + room));
    if (read !== text.length) return false;
    if (this.count) this.buf[this.used] = COMMA;
    this.used = start + written;
    this.count++;
    return true;
  }

  /** Grows the buffer to hold `need` bytes, within the bound; false when the bound is reached. */
  private grow(need: number): boolean {
    if (this.buf.length >= this.maxBytes) return false;
    let size = this.buf.length;
    while (size < need && size < this.maxBytes) size *= 2;
    const next = new Uint8Array(Math.min(size, this.maxBytes));
    next.set(this.buf.subarray(0, this.used));
    this.buf = next;
    return next.length >= need;
  }
}
