import { ProxyError } from "../errors/proxy-error.ts";
import type { UpstreamEvent } from "../stream/events.ts";

/**
 * Reads an attempt's events with its timeouts: the first event within `firstTokenMs`, every later
 * one within `idleMs`, all of them within `totalMs` of the attempt's start. Expiry cancels the
 * upstream and becomes a 504 `upstream_timeout`; a broken upstream stream becomes a 502.
 */
export class EventReader {
  private readonly deadline: number;
  private seenFirst = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<UpstreamEvent>,
    private readonly upstream: string,
    private readonly timeouts: { firstTokenMs: number; idleMs: number; totalMs: number },
    startedAt: number,
  ) {
    this.deadline = startedAt + timeouts.totalMs;
  }

  async next(): Promise<UpstreamEvent | null> {
    const wait = this.seenFirst ? this.timeouts.idleMs : this.timeouts.firstTokenMs;
    const total = this.deadline - Date.now();
    const ms = Math.max(0, Math.min(wait, total));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
    try {
      const r = await Promise.race([this.reader.read(), expired]);
      if (r === "timeout") {
        const which = total <= wait ? `timeouts.totalMs (${this.timeouts.totalMs} ms)` : this.seenFirst ? `timeouts.idleMs (${this.timeouts.idleMs} ms)` : `timeouts.firstTokenMs (${this.timeouts.firstTokenMs} ms)`;
        this.cancel();
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
    this.reader.cancel().catch(() => {});
  }
}
