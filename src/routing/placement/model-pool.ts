// What an isolate knows of each llama-server router's models (router mode): which are loaded or
// loading there, which of ours are in flight for each, when each was last used, how long each took
// to load, and which failed to load. Pure bookkeeping, every time passed in; placement reads it.
import type { RouterModel } from "../../health/parse-router-models.ts";

/** A model's state on one router as this isolate sees it. */
export type ModelStatus = "unloaded" | "loading" | "loaded";

interface ModelEntry {
  status: ModelStatus;
  /** Switchyard's requests for it in flight on this router. */
  inflight: number;
  /** When a request for it last started or ended here (0: never by us). The router evicts the least recently used idle model. */
  lastUsedAt: number;
  /** When the load under way began (status "loading"). */
  loadStartedAt?: number;
  /** When a load of it last failed here: not tried here again for FAILED_MS. */
  failedAt?: number;
  /**
   * When this isolate last changed it (absent: only reads have): a `/models` read begun before that,
   * or at the same instant, is older news for it. Same instant: workerd's clock stands still between
   * I/O, so a read a request starts and the attempt it then begins carry one time, and the read's
   * answer may predate the attempt's load.
   */
  changedAt?: number;
  /**
   * This isolate's loads of it here not answered yet. Until one is, a read finding it unloaded, or the
   * models it evicts still loaded, may predate the router's taking the request (olderThanOwnLoad):
   * believed, it let a second load through beside the first, which a full router may hang on.
   */
  ownLoads?: number;
  /** The model whose load (by this isolate, still under way) evicted this one. */
  evictedFor?: string;
}

interface PoolServer {
  /** `--models-max` (the router's `max_instances`); Infinity when it sets none. */
  modelsMax: number;
  models: Map<string, ModelEntry>;
  /** Measured load times, per model (ms, moving average). */
  loadMs: Map<string, number>;
  /** Slots of a loaded model (`--parallel`, from its `/props`), when read. */
  slots?: number;
  readAt: number;
}

/** What placement needs to know of one model on one router. */
export interface ModelView {
  status: ModelStatus;
  /** It failed to load here lately: not to be tried here. */
  failed: boolean;
  /** Expected load time here: measured here, else on another router, else DEFAULT_LOAD_MS. */
  loadMs: number;
  /** For a load under way: how long it has run. */
  loadingForMs: number;
  /** Loading it would need no eviction (fewer models loaded or loading than `--models-max`). */
  room: boolean;
  /**
   * The model the router would evict to load it (its least recently used idle one), or null when
   * there is room or it is already there; "busy" when every loaded model has requests in flight or
   * one is loading (loading it now would cut them off or force a swap mid-load: it waits).
   */
  victim: null | "busy" | { model: string; lastUsedAt: number; loadMs: number; loadedElsewhere: boolean };
}

/** A router's status for a model (`/models`' `status.value`) as the pool counts it: a sleeping model is loaded, a downloading one loading. */
export function poolStatusOf(status: RouterModel["status"]): ModelStatus {
  return status === "loaded" || status === "sleeping" ? "loaded" : status === "loading" || status === "downloading" ? "loading" : "unloaded";
}

/** Before any load of a model was measured: real weights take tens of seconds to load. */
export const DEFAULT_LOAD_MS = 20_000;
/** A model that failed to load on a router is not tried there again for this long (the operator may replace the file). */
export const FAILED_MS = 5 * 60_000;
const EWMA = 0.3;

/** The models of every router this isolate places requests on. */
export class ModelPool {
  private readonly servers = new Map<string, PoolServer>();

  /** Whether `server` is known to be a router (a read found it so). */
  isRouter(server: string): boolean {
    return this.servers.has(server);
  }

  /** Whether the router lists `model` (undefined: not a known router). */
  lists(server: string, model: string): boolean | undefined {
    return this.servers.get(server)?.models.has(model);
  }

  /** The names of the models a router lists. */
  modelIds(server: string): string[] {
    return [...(this.servers.get(server)?.models.keys() ?? [])];
  }

  /**
   * Whether a request for `model` may start on the router now without forcing a swap the router
   * cannot make cleanly: the model is there or loading, or there is room, or an idle model to evict.
   * True for what the pool does not know (not a router, a model it does not list).
   */
  mayHost(server: string, model: string, now: number): boolean {
    return this.hosting(server, model, now).rank !== "no";
  }

  /** mayHost, told apart: `present` (there or loading, or unknown to the pool), `load` (in about `loadMs`), or `no`. */
  hosting(server: string, model: string, now: number): { rank: "present" | "load" | "no"; loadMs: number } {
    const v = this.view(server, model, now);
    if (!v || v.status !== "unloaded") return { rank: "present", loadMs: 0 };
    return { rank: v.victim === "busy" || v.failed ? "no" : "load", loadMs: v.loadMs };
  }

  /** The models a router lists, with their status (for the model list). */
  models(server: string): Array<{ id: string; status: ModelStatus; failed: boolean }> {
    const s = this.servers.get(server);
    if (!s) return [];
    const now = Date.now();
    return [...s.models].map(([id, m]) => ({ id, status: m.status, failed: m.failedAt !== undefined && now - m.failedAt < FAILED_MS }));
  }

  /**
   * The router's slots as far as this isolate can tell before the hub's sample: each model it runs
   * has its own `--parallel` slots, so a loaded model's count times the models loaded or loading.
   */
  slots(server: string): number | undefined {
    const s = this.servers.get(server);
    if (s?.slots === undefined) return undefined;
    const running = [...s.models.values()].filter((m) => m.status !== "unloaded").length;
    return s.slots * Math.max(1, running);
  }

  /**
   * A read of the router's `/models` begun at `readStartedAt`: its statuses replace this isolate's,
   * except for models this isolate changed since (its own requests are newer news).
   */
  absorb(server: string, read: { modelsMax?: number; models: readonly RouterModel[]; slots?: number }, readStartedAt: number): void {
    let s = this.servers.get(server);
    if (!s) this.servers.set(server, (s = { modelsMax: read.modelsMax ?? Infinity, models: new Map(), loadMs: new Map(), readAt: readStartedAt }));
    if (read.modelsMax !== undefined) s.modelsMax = read.modelsMax;
    // An older read than one absorbed already (the hub's sample arriving after the isolate's own read) adds nothing.
    if (readStartedAt < s.readAt) return;
    s.readAt = readStartedAt;
    if (read.slots !== undefined) s.slots = read.slots;
    const listed = new Set<string>();
    for (const m of read.models) {
      listed.add(m.id);
      const status = poolStatusOf(m.status);
      const e = s.models.get(m.id);
      if (!e) {
        s.models.set(m.id, { status, inflight: 0, lastUsedAt: 0, ...(status === "loading" ? { loadStartedAt: readStartedAt } : {}), ...(m.failed ? { failedAt: readStartedAt } : {}) });
        continue;
      }
      if (e.changedAt !== undefined && e.changedAt >= readStartedAt) continue;
      if (!m.failed && olderThanOwnLoad(s, e, status)) continue;
      if (status === "loading" && e.status !== "loading") e.loadStartedAt = readStartedAt;
      e.status = status;
      if (status === "loaded") delete e.failedAt;
      else if (m.failed) e.failedAt ??= readStartedAt;
    }
    for (const [id, e] of s.models) if (!listed.has(id) && e.inflight === 0) s.models.delete(id);
  }

  /** What placement needs of `model` on `server` (undefined: not a known router, or it does not list the model). */
  view(server: string, model: string, now: number): ModelView | undefined {
    const s = this.servers.get(server);
    const e = s?.models.get(model);
    if (!s || !e) return undefined;
    const occupied = [...s.models.values()].filter((m) => m.status !== "unloaded").length;
    const here = e.status !== "unloaded";
    const room = here || occupied < s.modelsMax;
    let victim: ModelView["victim"] = null;
    if (!room) {
      const others = [...s.models.entries()].filter(([id, m]) => id !== model && m.status !== "unloaded");
      const idle = others.filter(([, m]) => m.status === "loaded" && m.inflight === 0).sort((a, b) => a[1].lastUsedAt - b[1].lastUsedAt)[0];
      // A load under way holds its place: evicting past it would swap twice.
      if (!idle || others.some(([, m]) => m.status === "loading")) victim = "busy";
      else victim = { model: idle[0], lastUsedAt: idle[1].lastUsedAt, loadMs: this.loadMsOf(server, idle[0]), loadedElsewhere: this.loadedElsewhere(server, idle[0]) };
    }
    return {
      status: e.status,
      failed: e.failedAt !== undefined && now - e.failedAt < FAILED_MS,
      loadMs: this.loadMsOf(server, model),
      loadingForMs: e.status === "loading" && e.loadStartedAt !== undefined ? Math.max(0, now - e.loadStartedAt) : 0,
      room,
      victim,
    };
  }

  /**
   * A request for `model` starts on `server`: in flight until `end`. When the model is not there it
   * is loading from now, and the router's least recently used idle model goes when there is no room
   * (as the router itself will do). Returns what the attempt reports back.
   */
  begin(server: string, model: string, now: number): PoolAttempt {
    const s = this.servers.get(server);
    const e = s?.models.get(model);
    if (!s || !e) return NO_ATTEMPT;
    e.inflight++;
    e.lastUsedAt = now;
    e.changedAt = now;
    const evicted: string[] = [];
    const loading = e.status === "unloaded";
    if (loading) {
      e.status = "loading";
      e.loadStartedAt = now;
      e.ownLoads = (e.ownLoads ?? 0) + 1;
      for (;;) {
        const occupied = [...s.models.values()].filter((m) => m.status !== "unloaded").length;
        if (occupied <= s.modelsMax) break;
        const lru = [...s.models.entries()].filter(([id, m]) => id !== model && m.status === "loaded").sort((a, b) => (a[1].inflight === 0 ? 0 : 1) - (b[1].inflight === 0 ? 0 : 1) || a[1].lastUsedAt - b[1].lastUsedAt)[0];
        if (!lru) break;
        lru[1].status = "unloaded";
        lru[1].changedAt = now;
        lru[1].evictedFor = model;
        evicted.push(lru[0]);
      }
    }
    let open = true;
    /** This attempt's load has an outcome (served, failed or ended): reads are believed again. */
    let loadOpen = loading;
    const settleLoad = () => {
      if (!loadOpen) return;
      loadOpen = false;
      e.ownLoads = Math.max(0, (e.ownLoads ?? 1) - 1);
    };
    return {
      evicted,
      served: (at) => {
        settleLoad();
        if (e.status === "loading" && loading && e.loadStartedAt !== undefined) {
          const sample = Math.max(1, at - e.loadStartedAt);
          const old = s.loadMs.get(model);
          s.loadMs.set(model, old === undefined ? sample : old + EWMA * (sample - old));
        }
        e.status = "loaded";
        delete e.failedAt;
        e.changedAt = at;
      },
      loadFailed: (at) => {
        settleLoad();
        e.status = "unloaded";
        e.failedAt = at;
        e.changedAt = at;
      },
      end: (at) => {
        settleLoad();
        if (!open) return;
        open = false;
        e.inflight = Math.max(0, e.inflight - 1);
        e.lastUsedAt = Math.max(e.lastUsedAt, at);
      },
    };
  }

  /** Models loaded (or loading) on `server` now, as this isolate sees them. */
  loaded(server: string): string[] {
    const s = this.servers.get(server);
    return s ? [...s.models].filter(([, m]) => m.status !== "unloaded").map(([id]) => id) : [];
  }

  private loadMsOf(server: string, model: string): number {
    const own = this.servers.get(server)?.loadMs.get(model);
    if (own !== undefined) return own;
    for (const s of this.servers.values()) {
      const other = s.loadMs.get(model);
      if (other !== undefined) return other;
    }
    return DEFAULT_LOAD_MS;
  }

  private loadedElsewhere(server: string, model: string): boolean {
    for (const [id, s] of this.servers) if (id !== server && s.models.get(model)?.status === "loaded") return true;
    return false;
  }
}

/**
 * Whether a read's `status` for entry `e` is older news than this isolate's own load under way on the
 * router: `e` is being loaded by a request of ours and reads unloaded, or was evicted for such a load
 * and reads loaded.
 */
function olderThanOwnLoad(s: PoolServer, e: ModelEntry, status: ModelStatus): boolean {
  if ((e.ownLoads ?? 0) > 0) return status === "unloaded";
  if (e.evictedFor === undefined) return false;
  return (s.models.get(e.evictedFor)?.ownLoads ?? 0) > 0 && status === "loaded";
}

/** One request's place in the pool's bookkeeping: reported back as it goes. */
export interface PoolAttempt {
  /** The models this isolate expects the router to evict for it. */
  evicted: readonly string[];
  /** Its first event came: the model is loaded (a load's time is measured from here). */
  served(at: number): void;
  /** The router answered that the model failed to load. */
  loadFailed(at: number): void;
  end(at: number): void;
}

const NO_ATTEMPT: PoolAttempt = { evicted: [], served: () => {}, loadFailed: () => {}, end: () => {} };
