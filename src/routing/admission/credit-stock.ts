// An isolate's credits from the pools' AdmissionHubs (docs/architecture.md, "Across isolates"): a
// slot the hub set aside for this isolate's next request on a server with room to spare, so that
// request starts without a round trip to the hub. Pure; times passed in.
import { CREDIT_MARGIN_MS, type Credit } from "./hub-wire.ts";

/** Pools (hub instances) whose credits an isolate keeps; the least recently stocked is dropped first. */
const MAX_POOLS = 256;

interface Held {
  id: string;
  /** Until when this isolate may use it: the hub's lifetime, counted from when the call that brought it was sent, less a margin for the use call's trip. */
  usableUntil: number;
}

/** Credits per pool and server, at most one each. */
export class CreditStock {
  private readonly pools = new Map<string, Map<string, Held>>();

  /** Credits a hub gave in answer to a call sent at `sentAt`. */
  put(pool: string, credits: readonly Credit[], sentAt: number): void {
    if (!credits.length) return;
    let servers = this.pools.get(pool);
    if (servers) this.pools.delete(pool);
    else servers = new Map();
    this.pools.set(pool, servers);
    if (this.pools.size > MAX_POOLS) this.pools.delete(this.pools.keys().next().value!);
    for (const c of credits) servers.set(c.server, { id: c.id, usableUntil: sentAt + c.ttlMs - CREDIT_MARGIN_MS });
  }

  /** The credit on `server` for a request starting now (taken: used once), or undefined. */
  take(pool: string, server: string, now: number): string | undefined {
    const servers = this.pools.get(pool);
    const held = servers?.get(server);
    if (!held) return undefined;
    servers!.delete(server);
    return held.usableUntil > now ? held.id : undefined;
  }

  /** The servers of `plan` this isolate holds no usable credit on, for the next call to ask credits for. */
  lacking(pool: string, plan: readonly string[], now: number): string[] {
    const servers = this.pools.get(pool);
    return plan.filter((s) => !((servers?.get(s)?.usableUntil ?? 0) > now));
  }
}
