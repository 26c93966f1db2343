// Reads one attempt's events under its timeouts, telling an upstream's stall from the request's own
// length and from a client that left, so health signals blame the right party.
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { Deadline, Deadlines } from "../../lib/deadlines.ts";

/**
 * Reads an attempt's events with its timeouts: the first event within `firstTokenMs`, every later
 * one within `idleMs`, all of them within `totalMs` of the attempt's start. Expiry cancels the
 * upstream and becomes a 504 `upstream_timeout`; a broken upstream stream becomes a 502. What is the
 * upstream's doing and what is not is told apart here, where it is known: `totalMs` firing before
 * the first-token or idle wait is the request's own length (marked, not a health signal), and a read
 * broken by the client leaving (`signal`) is the client's, not a broken upstream.
 */
/** Told once how the attempt's events ended: "ok", an error (thrown or in-stream), or the reader cancelled. */
export interface EndObserver {
  event?(e: UpstreamEvent): void;
  end(how: { ok: true } | { ok: false; error: ProxyError; broken: boolean } | { cancelled: true }): void;
}

export class EventReader {
  private readonly deadline: number;
  private seenFirst = false;
  private ended = false;
  observer?: EndObserver;

  constructor(
    private readonly reader: EventStreamReader,
    private readonly upstream: string,
    private readonly timeouts: { firstTokenMs: number; idleMs: number; totalMs: number },
    startedAt: number,
    private readonly deadlines: Deadlines,
    /** The attempt's signal: aborted when the client leaves, which breaks the upstream read. */
    private readonly signal?: AbortSignal,
  ) {
    this.deadline = startedAt + timeouts.totalMs;
  }

  private end(how: Parameters<EndObserver["end"]>[0]): void {
    if (this.ended) return;
    this.ended = true;
    this.observer?.end(how);
  }

  async next(): Promise<UpstreamEvent | null> {
    try {
      const e = await this.read();
      if (!e) this.end({ ok: true });
      else this.took(e);
      return e;
    } catch (e) {
      // The client left: the read broke because its request was aborted, not because the upstream failed.
      if (this.signal?.aborted && !(e instanceof ProxyError && e.code === "upstream_timeout")) {
        this.end({ cancelled: true });
        throw clientClosed();
      }
      if (e instanceof ProxyError) this.end({ ok: false, error: e, broken: true });
      throw e;
    }
  }

  /**
   * An event the upstream already sent, taken without waiting: no read is pending, so no timeout
   * applies (the next `next()` re-arms it), and the end is left to `next()`.
   */
  nextNow(): UpstreamEvent | undefined {
    if (this.ended) return undefined;
    const e = this.reader.readNow?.();
    if (e === undefined) return undefined;
    this.seenFirst = true;
    return this.took(e);
  }

  /** An event handed on: the observer hears of it, and an error event ends the attempt. */
  private took(e: UpstreamEvent): UpstreamEvent {
    this.observer?.event?.(e);
    if (e.type === "error") this.end({ ok: false, error: ProxyError.fromInfo(e.error), broken: false });
    return e;
  }

  // One deadline for the whole attempt instead of one per event, on the request's timer: set for the
  // first read and moved at each later one (moving it later costs no timer call). It fires only while
  // a read is pending; expiry cancels the reader, which ends that read, and `expired` turns the end
  // into the timeout error.
  private timeout: Deadline | undefined;
  private readWait = 0;
  private readTotal = 0;
  private reading = false;
  private expired = false;

  private readonly onTimeout = (): void => {
    this.timeout = undefined;
    if (!this.reading) return;
    this.expired = true;
    this.reader.cancel().catch(() => {});
  };

  private disarm(): void {
    this.timeout?.cancel();
    this.timeout = undefined;
  }

  private async read(): Promise<UpstreamEvent | null> {
    const now = Date.now();
    const wait = this.seenFirst ? this.timeouts.idleMs : this.timeouts.firstTokenMs;
    const total = this.deadline - now;
    const ms = Math.max(0, Math.min(wait, total));
    this.readWait = wait;
    this.readTotal = total;
    if (this.timeout) this.timeout.reset(ms);
    else this.timeout = this.deadlines.after(ms, this.onTimeout);
    this.reading = true;
    let r: ReadableStreamReadResult<UpstreamEvent>;
    try {
      r = await this.reader.read();
    } catch (e) {
      this.disarm();
      if (this.expired) {
        this.expired = false;
        throw this.timeoutError();
      }
      throw new ProxyError({
        status: 502,
        code: "upstream_error",
        retryable: true,
        message: `The connection to ${this.upstream} broke mid-answer (${e instanceof Error ? e.message : String(e)}).`,
      });
    } finally {
      this.reading = false;
    }
    if (this.expired) {
      this.expired = false;
      this.disarm();
      throw this.timeoutError();
    }
    if (r.done) {
      this.disarm();
      return null;
    }
    this.seenFirst = true;
    return r.value;
  }

  private timeoutError(): ProxyError {
    const wait = this.readWait;
    // The total deadline came before the first-token or idle wait was over: the upstream was keeping
    // to its pace and the answer was simply longer than the request's time.
    if (this.readTotal <= wait) {
      return new ProxyError({
        status: 504,
        code: "upstream_timeout",
        retryable: true,
        ownDeadline: true,
        message: `${this.upstream} ${this.seenFirst ? "was still answering" : "had not begun its answer"} after timeouts.totalMs (${this.timeouts.totalMs} ms).`,
      });
    }
    const which = this.seenFirst ? `timeouts.idleMs (${this.timeouts.idleMs} ms)` : `timeouts.firstTokenMs (${this.timeouts.firstTokenMs} ms)`;
    return new ProxyError({
      status: 504,
      code: "upstream_timeout",
      retryable: true,
      message: `${this.upstream} ${this.seenFirst ? "stalled" : "sent nothing"} for longer than ${which}.`,
    });
  }

  cancel(): void {
    this.disarm();
    this.end({ cancelled: true });
    this.reader.cancel().catch(() => {});
  }
}
