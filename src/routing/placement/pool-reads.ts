// How an isolate's ModelPool is kept current: each router's `/models` read when a request first meets
// it, again in the background once the copy is POOL_FRESH_MS old, and at once after a load failed
// there; the attempts' own starts, answers and failures update it in between, and the hub's samples
// too (src/routing/isolate/isolate-state.ts hears them).
import type { EnvVars } from "../../config/env-vars.ts";
import type { NamedTarget } from "../../upstreams/adapter.ts";
import { adapterOf, capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { ModelPool } from "./model-pool.ts";
import { pooledModel } from "./pool-gate.ts";

interface Read {
  /** When the last read started (0: never, or marked stale). */
  at: number;
  /** The first read of the server is under way: requests wait for it (later reads are not waited for). */
  first: boolean;
  /** What it found: a router, a single-model server, or nothing yet. */
  kind: "router" | "single" | "unknown";
  reading?: Promise<void>;
}

/** A router's copy is read again (in the background) once this old. */
export const POOL_FRESH_MS = 2000;
/**
 * Before a request would make a router load its model, the routers' copies older than this are read
 * again and waited for: another isolate may have loaded it (or something else) since.
 */
export const BEFORE_LOAD_FRESH_MS = 100;
/** A server found to serve one model is asked again after this (it may restart as a router). */
const SINGLE_RECHECK_MS = 60_000;
/** The first read of a server is waited for at most this long (then placement goes without it): a router answers it in milliseconds. */
const FIRST_READ_WAIT_MS = 750;
const READ_TIMEOUT_MS = 2000;
const MAX_SERVERS = 1000;

/** The reads of one isolate's routers, into its pool. */
export class PoolReads {
  private readonly reads = new Map<string, Read>();

  constructor(private readonly pool: ModelPool) {}

  /**
   * Reads what is stale among `targets`' servers that can pool models. A server's first read is waited
   * for (at most FIRST_READ_WAIT_MS): the first request must know whether it is a router and what it
   * has loaded. A server that did not answer it is not waited for again (a dead one would slow every
   * request); it is read again in the background. A known router's stale copy is refreshed without waiting (`waitAll`: waited for too,
   * as the model list does). `defer` keeps reads alive.
   */
  discover(targets: readonly NamedTarget[], env: EnvVars, defer: (p: Promise<unknown>) => void, opts: { waitAll?: boolean } = {}, now = Date.now()): Promise<void> | undefined {
    const waits: Promise<void>[] = [];
    for (const t of targets) {
      const server = capabilitiesOf(t).server;
      const read = adapterOf(t).readModelPool;
      if (!server || !read) continue;
      const r = this.reads.get(server.key);
      if (r?.reading) {
        if (r.first || opts.waitAll) waits.push(r.reading);
        continue;
      }
      if (r && now - r.at < (r.kind === "single" ? SINGLE_RECHECK_MS : POOL_FRESH_MS)) continue;
      if (!r && this.reads.size >= MAX_SERVERS) this.reads.delete(this.reads.keys().next().value!);
      const entry: Read = r ?? { at: 0, kind: "unknown", first: true };
      const startedAt = Date.now();
      entry.at = startedAt;
      entry.reading = read(t, env, READ_TIMEOUT_MS)
        .then(
          (found) => {
            if (found === "single") entry.kind = "single";
            else if (found) {
              entry.kind = "router";
              this.pool.absorb(server.key, found, startedAt);
            }
            // No answer: a server not known yet is asked again (in the background) after POOL_FRESH_MS.
          },
          () => {},
        )
        .finally(() => {
          entry.reading = undefined;
          entry.first = false;
        });
      this.reads.set(server.key, entry);
      defer(entry.reading);
      if (entry.first || opts.waitAll) waits.push(entry.reading);
    }
    if (!waits.length) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_READ_WAIT_MS)));
    return Promise.race([Promise.all(waits).then(() => undefined), cap]).finally(() => clearTimeout(timer));
  }

  /**
   * Reads again, and waits for (at most FIRST_READ_WAIT_MS), the routers of `targets` listing
   * `model` when none of them has it loaded or loading as far as this isolate knows, so the request
   * would make one load it: what this isolate knows of them may be older than another isolate's load
   * (docs/architecture.md, "Router pools"). Across isolates each router's copy otherwise ages up to
   * POOL_FRESH_MS and the hub's sample; a load decided on such a copy evicts the model another
   * isolate just loaded there, and the next request of that model evicts this one: the routers
   * thrash. A load takes seconds, so the read (milliseconds) is cheap beside it. Undefined: nothing to read.
   */
  beforeLoad(targets: readonly NamedTarget[], model: string, env: EnvVars, defer: (p: Promise<unknown>) => void, now = Date.now()): Promise<void> | undefined {
    const routers = targets.flatMap((t) => {
      const pooled = pooledModel(this.pool, t, model);
      return pooled === undefined ? [] : [{ t, server: capabilitiesOf(t).server!.key, pooled }];
    });
    if (!routers.length) return undefined;
    if (routers.some((r) => (this.pool.view(r.server, r.pooled, now)?.status ?? "unloaded") !== "unloaded")) return undefined;
    for (const { server } of routers) {
      const r = this.reads.get(server);
      if (r && !r.reading && now - r.at >= BEFORE_LOAD_FRESH_MS) r.at = 0;
    }
    return this.discover(routers.map((r) => r.t), env, defer, { waitAll: true }, now);
  }

  /** The router's copy is out of date (a load failed, an attempt found it otherwise): the next request reads it again. */
  stale(server: string): void {
    const r = this.reads.get(server);
    if (r && !r.reading) r.at = 0;
  }
}
