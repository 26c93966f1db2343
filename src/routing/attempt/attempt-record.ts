// One attempt in the isolate's books and the request's health signals. While it runs it holds a place
// in the ledger (what later placements queue behind, and what the admission queue counts against the
// server's slots) and, on a router, in the model pool. Its end frees the slot for a waiter; a
// success tells the hub the server is well and where the conversation's prompt now sits (a placement
// note), a failure tells its kind, and a router learns a load that was done or failed (putting back
// the models it evicted for a failed one).
import type { EnvVars } from "../../config/env-vars.ts";
import type { ProxyError } from "../../errors/proxy-error.ts";
import type { FailureKind } from "../../health/classify-failure.ts";
import type { HealthRecorder } from "../../health/health-client.ts";
import type { PromptSize } from "../../upstreams/context-fit.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import { slotReleased } from "../admission/queue-place.ts";
import { isolateState, type IsolateState } from "../isolate/isolate-state.ts";
import { expectedServiceMs, placementNote } from "../placement/ledger-updates.ts";
import type { PoolAttempt } from "../placement/model-pool.ts";
import type { PoolEntry } from "../placement/pool-gate.ts";
import { putBackEvicted } from "../placement/put-back-evicted.ts";
import type { PlacementRequest } from "../placement/rank-servers.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";

export interface RecordOptions {
  /** The request's health signals. */
  health: HealthRecorder;
  /** What placement read from the request (`least-busy` only): the ledger's prefixes and the hub's note. */
  placement: PlacementRequest | null;
  env: EnvVars;
  /** Keeps background work (a put-back) alive past the response (ctx.waitUntil). */
  defer(p: Promise<unknown>): void;
  /** Called once its place ends, `served` when it answered (the shared admission line learns the end). */
  ended?(served: boolean): void;
}

/** A successful attempt's place in the ledger: `end()` once the answer is over; the prompt's characters, when sized. */
export interface Placed {
  server: string;
  chars: number | undefined;
  end(at: number): void;
}

/** One attempt's bookkeeping, begun as it starts (see the file's head). */
export class AttemptRecord {
  private readonly url: string | undefined;
  private readonly server: string | undefined;
  private readonly inPool: PoolAttempt | undefined;
  /** Ends its place in the ledger and the pool (`served`: it answered), and wakes the line. */
  private readonly end: ((served?: boolean, at?: number) => void) | undefined;
  /** This isolate's ledger, pool and line (src/routing/isolate/isolate-state.ts). */
  private readonly isolate: IsolateState = isolateState();

  constructor(
    private readonly target: Target,
    /** The router and model it runs on (placement/pool-gate.ts), if any. */
    private readonly entry: PoolEntry | undefined,
    private readonly opts: RecordOptions,
    startedAt: number,
  ) {
    const tracked = capabilitiesOf(target).server;
    this.url = tracked?.url;
    const server = (this.server = tracked?.key);
    const { health, placement } = opts;
    const { ledger, pool, queue } = this.isolate;
    const begun = server !== undefined ? ledger.begin(server, placement?.key ?? null, expectedServiceMs(ledger, server, placement, startedAt), startedAt) : undefined;
    const inPool = (this.inPool = entry ? pool.begin(entry.server, entry.model, startedAt) : undefined);
    this.end = begun
      ? (served?: boolean, at?: number) => {
          begun(served, at);
          inPool?.end(at ?? Date.now());
          slotReleased(queue, () => health.snapshot());
          opts.ended?.(served === true);
        }
      : undefined;
  }

  /**
   * The attempt succeeded at `at`. Its place in the ledger, when it has one, is the caller's to end
   * once the answer is over; the answer's usage then teaches the server's speeds and its tokens per
   * character (the context fit reads them too).
   */
  succeeded(at: number, size: PromptSize | null): Placed | undefined {
    const { inPool, server, end } = this;
    const { health, placement } = this.opts;
    if (inPool) {
      const justLoaded = this.entry?.view.status !== "loaded";
      inPool.served(at);
      // A model just loaded there: the next read learns its slots (the admission queue's count).
      if (justLoaded) this.isolate.poolReads.stale(server!);
    }
    if (this.url !== undefined) health.success(this.url);
    if (server !== undefined && placement) {
      this.isolate.ledger.served(server, placement.prefixes, at);
      health.placed(placementNote(server, placement, at));
    }
    const chars = placement?.prefixes.at(-1)?.chars ?? size?.chars;
    return server !== undefined && end ? { server, chars, end: (at: number) => end(true, at) } : undefined;
  }

  /** The attempt failed with `err` before anything reached the client: its places end. */
  failed(err: ProxyError): void {
    const { inPool } = this;
    if (inPool && err.code === "model_load_failed") {
      inPool.loadFailed(Date.now());
      // The router evicted a model for this load before it failed: put it back (in the background).
      if (inPool.evicted.length) this.opts.defer(putBackEvicted(this.target, inPool.evicted, this.opts.env));
    }
    if (inPool) this.isolate.poolReads.stale(this.server!);
    this.end?.(false, Date.now());
  }

  /** The failure's health signal, of its kind (a target skipped or a client gone sends none). */
  unhealthy(kind: FailureKind, retryAfterMs: number | undefined): void {
    if (this.url !== undefined) this.opts.health.failure(this.url, kind, retryAfterMs);
  }
}
