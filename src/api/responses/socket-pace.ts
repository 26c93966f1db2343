// How fast a Responses WebSocket may send: a bound on what waits, unread, for a client that may not
// be reading — the runtime cannot say (workerd's server-side WebSocket has no bufferedAmount and its
// send() never blocks: it queues in the process, without limit).

/**
 * Pure: the bytes a socket has sent that its client may not have read yet, estimated as a bucket
 * filled by every message and drained at `drainPerS` (the rate a client is assumed to read at, far
 * above any model's output). Over `capacity` the relay stops reading its upstream — the upstream
 * stalls, as it does behind an HTTP client that does not read — until the bucket drains back; a
 * response held back for longer than a full bucket takes to drain (the client kept less than
 * `drainPerS` for `capacity` worth of bytes: 2 × `capacity` may wait) is given up, socket and all.
 */
export class SendPace {
  private queued = 0;
  private at: number;
  private held = 0;

  constructor(
    readonly capacity: number,
    readonly drainPerS: number,
    now: number,
  ) {
    this.at = now;
  }

  /** `bytes` were sent at `now`. */
  sent(bytes: number, now: number): void {
    this.drain(now);
    this.queued += bytes;
  }

  /**
   * What to do before reading more of the upstream at `now`: go on, wait `ms` (the bucket is over
   * capacity), or give up (held back too long in this response).
   */
  next(now: number): { kind: "go" } | { kind: "wait"; ms: number } | { kind: "give-up" } {
    this.drain(now);
    const over = this.queued - this.capacity;
    if (over <= 0) return { kind: "go" };
    const ms = Math.ceil((over / this.drainPerS) * 1000);
    if (this.held + ms > this.holdLimitMs) return { kind: "give-up" };
    this.held += ms;
    return { kind: "wait", ms };
  }

  /** A new response starts: its hold-back time counts from zero (the bucket itself keeps draining). */
  startResponse(): void {
    this.held = 0;
  }

  /** The longest one response is held back: as long as a full bucket takes to drain. */
  get holdLimitMs(): number {
    return Math.ceil((this.capacity / this.drainPerS) * 1000);
  }

  private drain(now: number): void {
    this.queued = Math.max(0, this.queued - ((now - this.at) / 1000) * this.drainPerS);
    this.at = now;
  }
}
