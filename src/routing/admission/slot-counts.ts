// The slot counts an isolate read itself from its llama-servers' `/props`: what the admission
// queue gates on from a server's first request here until the hub's `/slots` sample reaches the
// isolate (a second or more, longer than a whole answer when the hub had never heard of the server).
import type { EnvVars } from "../../config/env-vars.ts";
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { NamedTarget } from "../../upstreams/adapter.ts";
import { adapterOf, capabilitiesOf } from "../../upstreams/registry/adapters.ts";

interface Known {
  /** Undefined until a read told one. */
  slots: number | undefined;
  /** When the last read started. */
  at: number;
  /** The read in progress: resolves true when it brought a count that changes what the queue knows. */
  reading?: Promise<boolean>;
}

/** A read that told nothing (no answer, no `total_slots`) is tried again after this. */
const RETRY_MS = 30_000;
/** A count is read again after this: a restart may change `--parallel`. The sample overrides it anyway. */
const REFRESH_MS = 10 * 60_000;
const READ_TIMEOUT_MS = 2000;
/** The longest a request waits for a read another request started (a server that does not answer). */
const WAIT_MS = 1000;
/** Servers remembered (they come from the configuration; the bound is for safety). */
const MAX_SERVERS = 1000;

/** The slot counts one isolate read (src/routing/isolate/isolate-state.ts owns its one). */
export class SlotCounts {
  private readonly known = new Map<string, Known>();

  /** The slot count read from `server` (its health key), if any. */
  learned(server: string): number | undefined {
    return this.known.get(server)?.slots;
  }

  /**
   * `server`'s slot count read: `started` when this call began a read (none known and fresh, none in
   * progress), else the read in progress, if any. Its promise resolves true when it brought a count
   * that changes what the queue knows (waiters may start).
   */
  learn(server: string, read: () => Promise<number | undefined>, now = Date.now()): { reading: Promise<boolean>; started: boolean } | undefined {
    const k = this.known.get(server);
    if (k?.reading) return { reading: k.reading, started: false };
    if (k && now - k.at < (k.slots === undefined ? RETRY_MS : REFRESH_MS)) return undefined;
    if (!k && this.known.size >= MAX_SERVERS) this.known.delete(this.known.keys().next().value!);
    const before = k?.slots;
    const reading = read().then(
      (slots) => {
        this.known.set(server, { slots: slots ?? before, at: now });
        return slots !== undefined && slots !== before;
      },
      () => {
        this.known.set(server, { slots: before, at: now });
        return false;
      },
    );
    this.known.set(server, { slots: before, at: now, reading });
    return { reading, started: true };
  }

  /**
   * Reads the slot count of every target that reports slots and whose count neither the snapshot (not sampled yet, or
   * the hub restarted) nor this isolate knows. The request that starts a read does not wait for it:
   * nothing of ours is on that server yet, so it has a slot. A request that finds a read in progress
   * (it came while the first was under way) waits for it, at most WAIT_MS: the returned promise.
   * `learned` is called when a count arrives (pump the lines); `defer` keeps the reads alive.
   */
  learnAll(targets: readonly NamedTarget[], snapshot: HealthSnapshot, env: EnvVars, learned: () => void, defer: (p: Promise<unknown>) => void): Promise<void> | undefined {
    const waits: Promise<boolean>[] = [];
    for (const t of targets) {
      const tracked = capabilitiesOf(t).server;
      const read = adapterOf(t).readSlotCount;
      if (!tracked?.reportsSlots || !read) continue;
      const server = tracked.key;
      if (snapshot.upstreams[server]?.slotsTotal !== undefined) continue;
      const r = this.learn(server, () => read(t, env, READ_TIMEOUT_MS));
      if (!r) continue;
      if (r.started) defer(r.reading.then((changed) => (changed ? learned() : undefined)));
      else waits.push(r.reading);
    }
    if (!waits.length) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, WAIT_MS)));
    return Promise.race([Promise.all(waits).then(() => undefined), cap]).finally(() => clearTimeout(timer));
  }
}
