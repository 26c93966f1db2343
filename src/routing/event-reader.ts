import { ProxyError } from "../errors/proxy-error.ts";
import type { UpstreamEvent } from "../stream/events.ts";

/**
 * Reads an attempt's events with its timeouts: the first event within `firstTokenMs`, every later
 * one within `idleMs`, all of them within `totalMs` of the attempt's start. Expiry cancels the
 * upstream and becomes a 504 `upstream_timeout`; a broken upstream stream becomes a 502.
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
    private readonly reader: ReadableStreamDefaultReader<UpstreamEvent>,
    private readonly upstream: string,
    private readonly timeouts: { firstTokenMs: number; idleMs: number; totalMs: number },
    startedAt: number,
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
      else {
        this.observer?.event?.(e);
        if (e.type === "error") this.end({ ok: false, error: ProxyError.fromInfo(e.error), broken: false });
      }
      return e;
    } catch (e) {
      if (e instanceof ProxyError) this.end({ ok: false, error: e, broken: true });
      throw e;
    }
  }

  private async read(): Promise<UpstreamEvent | null> {
    const wait = this.seenFirst ? this.timeouts.idleMs : this.timeouts.firstTokenMs;
    const total = this.deadline - Date.now();
    const ms = Math.max(0, Math.min(wait, total));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
    try {
      const r = await Promise.race([this.reader.read(), expired]);
      if (r === "timeout") {
        const which = total <= wait ? `timeouts.totalMs (${this.timeouts.totalMs} ms)` : this.seenFirst ? `timeouts.idleMs (${this.timeouts.idleMs} ms)` : `timeouts.firstTokenMs (${this.timeouts.firstTokenMs} ms)`;
        this.reader.cancel().catch(() => {});
        throw new ProxyError({
          status: 504,
          code: "upstream_timeout",
          retryable: true,
          message: `${this.upstream} ${this.seenFirst ? "stalled" : "sent nothing"} for longer than ${which}.`,
        });
      }
      if (r.done) return null;
      this.seenFirst = true;
      return r.value;
    } catch (e) {
      if (e instanceof ProxyError) throw e;
      throw new ProxyError({
        status: 502,
        code: "upstream_error",
        retryable: true,
        message: `The connection to ${this.upstream} broke mid-answer (${e instanceof Error ? e.message : String(e)}).`,
      });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  cancel(): void {
    this.end({ cancelled: true });
    this.reader.cancel().catch(() => {});
  }
}
