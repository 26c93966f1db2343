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
/** Without a hint the buffer starts this big, and doubles as spans come (a span is about 1 KB). */
const FIRST_BYTES = 16 * 1024;

export class SpanBatch {
  /** The spans in the batch. */
  count = 0;
  private buf: Uint8Array;
  private used = HEAD.length;

  /**
   * @param maxBytes the body's bound: a span that would take it past is refused (the next batch takes it).
   * @param firstBytes the size to start at: the exporter passes its last batch's `nextBatchBytes`, so that a
   *   steady stream of batches allocates one buffer each rather than a doubling series of them (in
   *   the inspector's profile under the bench's traffic, the doublings' copies took as long as
   *   writing the spans into the buffer).
   */
  constructor(
    private readonly maxBytes: number,
    firstBytes = FIRST_BYTES,
  ) {
    this.buf = new Uint8Array(Math.max(HEAD.length + TAIL.length, Math.min(firstBytes, maxBytes)));
    this.buf.set(HEAD);
  }

  /** Adds a span's OTLP/JSON text; false when it does not fit within the bound. */
  add(text: string): boolean {
    const at = this.used + (this.count ? 1 : 0);
    // Encoded into the room left before the envelope's tail; what did not all fit is tried again
    // in a buffer twice the size (a few times per batch), up to the bound.
    for (;;) {
      const end = this.buf.length - TAIL.length;
      const { read, written } = encoder.encodeInto(text, this.buf.subarray(at, end));
      if (read === text.length && at <= end) {
        if (this.count) this.buf[this.used] = COMMA;
        this.used = at + written;
        this.count++;
        return true;
      }
      if (!this.grow()) return false;
    }
  }

  /** The size for the next batch's buffer (`firstBytes`): this body's, with room for a little more traffic. */
  nextBatchBytes(): number {
    return Math.max(FIRST_BYTES, Math.ceil((this.used + TAIL.length) * 1.25));
  }

  /** The export body: the envelope around the spans. */
  body(): Uint8Array {
    const out = this.buf.subarray(0, this.used + TAIL.length);
    out.set(TAIL, this.used);
    return out;
  }

  /** Doubles the buffer, within the bound; false when it is there already. */
  private grow(): boolean {
    if (this.buf.length >= this.maxBytes) return false;
    const next = new Uint8Array(Math.min(this.buf.length * 2, this.maxBytes));
    next.set(this.buf.subarray(0, this.used));
    this.buf = next;
    return true;
  }
}
