// The hub's answer to the Worker for one relayed request: a stream of JSON lines (the page's messages
// and the hub's own), written as they come. Writing after the end, or to a stream the Worker left, is a no-op.

const encoder = new TextEncoder();

export class NdjsonWriter {
  readonly body: ReadableStream<Uint8Array>;
  private out!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;

  /** `onCancel`: the Worker stopped reading (its client left, or the attempt was abandoned). */
  constructor(onCancel: () => void) {
    this.body = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.out = c;
      },
      cancel: onCancel,
    });
  }

  /** One line; `line` is a JSON text, without its newline. */
  write(line: string): void {
    if (this.closed) return;
    try {
      this.out.enqueue(encoder.encode(`${line}\n`));
    } catch {
      this.closed = true;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.out.close();
    } catch {}
  }
}
