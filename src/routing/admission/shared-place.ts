// A request's place in the admission line shared by every isolate (docs/architecture.md, "Admission
// queue", "Across isolates"): its turn and its server come from the pool's AdmissionHub, which counts
// every isolate's requests against the servers' slots. When the hub does not answer in time, or
// fails, the request falls back to this isolate's own line (QueuePlace) and the fallback is counted
// (/metrics: switchyard_admission_shared_total{outcome="fallback"}).
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { randomUuid } from "../../lib/ids.ts";
import type { AdmissionHub } from "./admission-hub.ts";
import { admissionHub, ASK_TIMEOUT_MS, poolName, within, type SharedCounts } from "./hub-client.ts";
import type { Ask, AskReply, Credit, WaitReply } from "./hub-wire.ts";
import type { CreditStock } from "./credit-stock.ts";
import { lineRefusal, retryAfterSeconds } from "./capacity.ts";
import { QueuePlace, type PlaceOptions } from "./queue-place.ts";

/** Past its wait, a wait call that has not answered within this long more counts as the hub failing. */
const WAIT_GRACE_MS = 2000;
/** The expected service of a request when Retry-After is computed here (the hub does not know the servers' speeds). */
const DEFAULT_SERVICE_MS = 8000;

export interface SharedOptions extends PlaceOptions {
  env: EnvVars;
  /** The llama-servers of the plan (health keys), in plan order. */
  servers: readonly string[];
  /** Each server's slot count when known here (its sample or `/props` read). */
  slots(server: string): number | undefined;
  /** This isolate's tally of shared admissions. */
  counts: SharedCounts;
  /** The credits the hubs gave this isolate. */
  credits: CreditStock;
  /** Whether a credit on `server` may take this request (its conversation, if it has one, is known to live there). */
  creditFits(server: string): boolean;
  /** The request's conversation (placement's key), if it has one. */
  conversation(): string | null;
  /** The model's `balance` is "ordered": the hub grants the first server of the plan with a slot free. */
  ordered: boolean;
  /** Keeps a call alive past the response (ctx.waitUntil). */
  defer(p: Promise<unknown>): void;
}

/**
 * QueuePlace's shared counterpart (first, again, timeLeft, mayStart, exclude, turnEnded; and
 * attemptEnded, the end the hub learns). A grant names one server: an attempt may start there and
 * nowhere else (the others refuse as busy, unasked); the hub frees it when the attempt ends (the
 * answer over, or failed) or when the pass ends without using it.
 */
export class SharedPlace {
  private readonly arrivedAt = Date.now();
  private readonly deadline: number;
  private readonly base = randomUuid();
  private asks = 0;
  /** The id of the current ask, and the server granted to it (null: none yet). */
  private id = "";
  private server: string | null = null;
  private started = false;
  /** The grant used by an attempt that failed in this pass (its id): the pass's next server may be taken (take). */
  private lost: string | null = null;
  private plan: string[];
  /** The order the isolate's placement would try the plan in, the servers it put back, the home it holds for (prefer). */
  private order: readonly string[] | null = null;
  private demoted: readonly string[] = [];
  private hold: { server: string; until: number } | undefined;
  /** Servers whose attempt for this request failed: its next asks leave them out (failover), unless that leaves none. */
  private readonly failed = new Set<string>();
  /** Set once the hub failed: this isolate's own line from then on. */
  private local: QueuePlace | null = null;
  /** The call telling the hub this request started on a credit: its end is sent after it. */
  private using: Promise<unknown> | null = null;
  private readonly pool: string;

  constructor(private readonly opts: SharedOptions) {
    this.deadline = this.arrivedAt + opts.maxWaitMs;
    this.plan = [...opts.servers];
    this.pool = poolName(opts.servers);
  }

  first(): Promise<void> | null {
    return this.acquire();
  }

  /**
   * The order the request's pass would try its servers in, those placement put back (an open circuit,
   * down or loading, a context that holds the prompt but not max_tokens), and the home it would wait
   * for: the hub grants by them, so a pool behind many isolates places as one isolate does.
   */
  prefer(order: readonly string[], demoted: readonly string[], hold?: { server: string; until: number }): void {
    this.order = order;
    this.demoted = demoted;
    this.hold = hold;
  }

  again(): Promise<void> | null {
    if (this.local) return this.local.again();
    this.release();
    const now = Date.now();
    if (now >= this.deadline) throw this.refusal(now, 0);
    return this.acquire();
  }

  timeLeft(now = Date.now()): number {
    return Math.max(0, this.deadline - now);
  }

  mayStart(server: string): boolean | Promise<boolean> {
    if (this.local) return this.local.mayStart(server);
    if (this.server === server && !this.started) {
      this.started = true;
      return true;
    }
    // The granted attempt failed: the pass retries it or moves on to its next server if the hub has
    // a slot free there, as one isolate's pass does, instead of a new turn in line (the servers that
    // failed are left out of the next pass's ask, not of this pass's own retries).
    return this.lost !== null && this.server === null ? this.take(server, this.lost) : false;
  }

  exclude(server: string): void {
    this.local?.exclude(server);
    this.plan = this.plan.filter((s) => s !== server);
  }

  /** The pass is over: a grant it did not use goes back. */
  turnEnded(): void {
    this.lost = null;
    if (this.local) return this.local.turnEnded();
    if (!this.started) this.release();
  }

  /**
   * The attempt that used the grant ended: its answer is over (`served`), or it failed, and then the
   * next ask leaves its server out, so the request fails over to the plan's next server instead of
   * being granted the one that just failed again.
   */
  attemptEnded(served: boolean): void {
    if (!this.started) return;
    if (!served && this.server !== null) {
      this.failed.add(this.server);
      this.lost = this.id;
    }
    this.release();
  }

  private release(): void {
    if (this.server === null) return;
    const id = this.id;
    this.server = null;
    this.started = false;
    // After the use call, if the grant came from a credit: an end the hub met first would free nothing.
    const using = this.using;
    this.using = null;
    this.call((hub) => (using ? using.then(() => hub.end(id)) : hub.end(id)));
  }

  /** A call to the pool's hub in the background (kept alive past the response); its failure is the hub's to outlive. */
  private call(f: (hub: DurableObjectStub<AdmissionHub>) => Promise<unknown>): void {
    this.opts.defer(this.hubCall(f).catch(() => {}));
  }

  private async acquire(): Promise<void> {
    const { opts } = this;
    this.id = `${this.base}:${++this.asks}`;
    const slots: Record<string, number> = {};
    for (const s of this.plan) {
      const n = opts.slots(s);
      if (n !== undefined) slots[s] = n;
    }
    const hub = admissionHub(opts.env, opts.servers);
    const ask = this.ask(slots);
    // Nothing left to grant (every server excluded: the prompt fits none): the pass says why, at once.
    if (!ask.plan.length) return;
    const sentAt = Date.now();
    if (this.startOnCredit(ask, sentAt)) return;
    let reply: AskReply | undefined;
    try {
      reply = await within(hub.ask(ask, opts.credits.lacking(this.pool, ask.plan, sentAt)) as Promise<AskReply>, ASK_TIMEOUT_MS);
    } catch {}
    if (!reply) {
      // What the hub does with this ask when it answers late is taken back.
      const id = this.id;
      this.call((h) => h.leave(id));
      return this.fallBack();
    }
    if ("server" in reply) {
      this.opts.counts.granted++;
      this.server = reply.server;
      if (reply.credits) opts.credits.put(this.pool, reply.credits, sentAt);
      return;
    }
    this.opts.counts.queued++;
    return this.waitFor(hub, this.id);
  }

  /**
   * Starts the request on this isolate's credit for the server its pass would try first, if it holds
   * one it may use: no call before the start. The hub learns of it in the background (use), and may
   * give a credit for the next request there in return. Not for a batch line (its keepFree is the
   * hub's to judge per request), a server placement put back, or a conversation this isolate has not
   * seen live there (the hub knows where every isolate placed it).
   */
  private startOnCredit(ask: Ask, now: number): boolean {
    const { opts } = this;
    const server = ask.plan[0]!;
    if (ask.keepFree || ask.demoted?.includes(server) || !opts.creditFits(server)) return false;
    const credit = opts.credits.take(this.pool, server, now);
    if (credit === undefined) return false;
    opts.counts.credited++;
    this.server = server;
    const using = this.hubCall((hub) => hub.use(credit, server, ask, [server]) as Promise<Credit[]>).then((more) => opts.credits.put(this.pool, more, now));
    this.using = using.catch(() => {});
    opts.defer(this.using);
    return true;
  }

  /** A call to the pool's hub, rejected when it throws at once. */
  private hubCall<T>(f: (hub: DurableObjectStub<AdmissionHub>) => Promise<T>): Promise<T> {
    try {
      return f(admissionHub(this.opts.env, this.opts.servers));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * The ask for the current id: the plan in the placement's order, less the servers that failed it
   * (unless that leaves none) — but for a take within the pass (`withFailed`), whose retries are its own.
   */
  private ask(slots: Record<string, number>, withFailed = false): Ask {
    const { opts } = this;
    const ordered = this.order ? [...this.order.filter((s) => this.plan.includes(s)), ...this.plan.filter((s) => !this.order!.includes(s))] : this.plan;
    const untried = withFailed ? ordered : ordered.filter((s) => !this.failed.has(s));
    const plan = untried.length ? untried : ordered;
    const demoted = this.demoted.filter((s) => plan.includes(s));
    const holdMs = this.hold && this.hold.server === plan[0] ? this.hold.until - Date.now() : 0;
    const hold = holdMs > 0 ? { hold: { server: this.hold!.server, ms: holdMs } } : {};
    return { id: this.id, model: opts.model, key: opts.key ?? "", priority: opts.priority, plan, slots, conversation: opts.conversation(), ordered: opts.ordered, ...(demoted.length ? { demoted } : {}), ...(opts.keepFree ? { keepFree: opts.keepFree } : {}), ...hold };
  }

  /** A slot on `server` for the pass's next attempt after its granted one failed; false when it has none free (or the hub does not answer). */
  private async take(server: string, previous: string): Promise<boolean> {
    const slots: Record<string, number> = {};
    const n = this.opts.slots(server);
    if (n !== undefined) slots[server] = n;
    this.id = `${this.base}:${++this.asks}`;
    const id = this.id;
    let reply: { server: string } | null | undefined;
    try {
      reply = await within(admissionHub(this.opts.env, this.opts.servers).take(this.ask(slots, true), server, previous) as Promise<{ server: string } | null>, ASK_TIMEOUT_MS);
    } catch {}
    if (reply === undefined) this.call((h) => h.leave(id));
    if (!reply || this.id !== id) return false;
    this.server = reply.server;
    this.started = true;
    this.lost = null;
    return true;
  }

  private async waitFor(hub: DurableObjectStub<AdmissionHub>, id: string): Promise<void> {
    const { signal } = this.opts;
    if (signal.aborted) {
      this.call((h) => h.leave(id));
      throw clientClosed();
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<"aborted">((resolve) => signal.addEventListener("abort", (onAbort = () => resolve("aborted")), { once: true }));
    const left = this.timeLeft();
    let reply: WaitReply | "aborted" | undefined;
    try {
      reply = await within(Promise.race([hub.wait(id, left) as Promise<WaitReply>, aborted]), left + WAIT_GRACE_MS);
    } catch {
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
    if (reply === "aborted") {
      this.call((h) => h.leave(id));
      throw clientClosed();
    }
    if (!reply) {
      // The hub failed mid-wait: whatever it held for this request is taken back, and the isolate's own line decides.
      this.call((h) => h.leave(id));
      return this.fallBack();
    }
    if ("server" in reply) {
      this.server = reply.server;
      return;
    }
    this.opts.counts.refused++;
    throw this.refusal(Date.now(), reply.ahead);
  }

  private async fallBack(): Promise<void> {
    this.opts.counts.fallback++;
    this.local = new QueuePlace({ ...this.opts, plan: this.plan.map((server) => ({ server })) });
    await this.local.first();
  }

  private refusal(now: number, ahead: number): ProxyError {
    const slots = this.plan.reduce((n, s) => n + (this.opts.slots(s) ?? 1), 0);
    return lineRefusal(this.opts.model, now - this.arrivedAt, ahead, retryAfterSeconds(ahead, Math.max(1, slots), DEFAULT_SERVICE_MS));
  }
}

