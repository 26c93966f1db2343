// When a response commits to 200 (after a short grace, so an early error keeps its status), and
// the body writer that keeps it going and notices a client that left.
import { ProxyError } from "../errors/proxy-error.ts";
import { within, type Deadlines } from "../lib/deadlines.ts";
import { ByteQueue } from "./byte-queue.ts";

export type Settled<T> = { ok: true; value: T } | { ok: false; error: ProxyError };

/**
 * Waits for `work` for at most `graceMs`. Returns its outcome if it settled in time (so an early
 * error keeps its HTTP status), or null: the caller then commits a 200 and keeps the client alive
 * with heartbeats until `work` settles.
 */
export function settleWithin<T>(work: Promise<T>, graceMs: number, deadlines: Deadlines): Promise<Settled<T> | null> {
  return within(settle(work), graceMs, deadlines, () => null);
}

export function settle<T>(work: Promise<T>): Promise<Settled<T>> {
  return work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error instanceof ProxyError ? error : new ProxyError({ status: 500, code: "internal_error", message: "Switchyard hit an internal error." }) }),
  );
}

/** Queued bytes beyond which `flush` waits for the body to drain. */
const SEND_QUEUE_BYTES = 64 * 1024;

/**
 * A byte sink for a committed response body that notices a departed client: the runtime only tells
 * a Worker the client left when a write fails, so every write (heartbeats included) is watched and
 * `onGone` fires once.
 *
 * Frames are appended to `queue` and sent by `flush` without waiting for the previous write: written
 * at once when the body is idle, otherwise joined to what is queued behind the write in flight and
 * written right after it. A fast upstream's frames then leave in fewer, larger writes, and no frame
 * waits for anything but the write before it.
 */
export class BodyWriter {
  readonly readable: ReadableStream<Uint8Array>;
  /** Where frames are appended before `flush`. */
  readonly queue = new ByteQueue();
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private gone = false;
  private closed = false;
  private draining: Promise<void> | null = null;
  lastWriteAt = Date.now();

  constructor(private readonly onGone: () => void) {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.readable = readable;
    this.writer = writable.getWriter();
    this.writer.closed.catch(() => this.markGone());
  }

  get clientGone(): boolean {
    return this.gone;
  }

  /** Writes `text` after anything queued; resolves once it was written (false if the client is gone). */
  async write(text: string): Promise<boolean> {
    this.queue.text(text);
    void this.flush();
    if (this.draining) await this.draining;
    return !this.gone && !this.closed;
  }

  /** Appends `text` and flushes. */
  send(text: string): Promise<void> {
    this.queue.text(text);
    return this.flush();
  }

  /**
   * Sends what is queued. Resolves at once unless more than `limit` bytes wait behind the write in
   * flight (back-pressure).
   */
  flush(limit = SEND_QUEUE_BYTES): Promise<void> {
    if (this.gone || this.closed) {
      this.queue.take();
      return Promise.resolve();
    }
    if (this.queue.size === 0) return Promise.resolve();
    this.lastWriteAt = Date.now();
    this.draining ??= this.drain();
    return this.queue.size > limit ? this.draining : Promise.resolve();
  }

  private async drain(): Promise<void> {
    for (let bytes = this.queue.take(); bytes && !this.gone; bytes = this.queue.take()) {
      try {
        await this.writer.write(bytes);
      } catch {
        this.markGone();
      }
    }
    this.queue.take();
    this.draining = null;
  }

  /** Writes `text` if nothing was written for `idleMs` (heartbeats). */
  heartbeat(text: string, idleMs: number): void {
    if (Date.now() - this.lastWriteAt >= idleMs) void this.send(text);
  }

  async close(): Promise<void> {
    if (this.draining) await this.draining;
    if (this.gone || this.closed) return;
    this.closed = true;
    await this.writer.close().catch(() => this.markGone());
  }

  private markGone(): void {
    if (this.gone || this.closed) return;
    this.gone = true;
    this.onGone();
  }
}
