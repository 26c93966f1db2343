// The relayed requests in flight, from placement to their last line: queued per session and model
// (relay-queue.ts), sent to the page when their turn comes, the page's answers passed on to the Worker
// (usage checked, relay-usage.ts), cancelled, and moved or failed when their session goes or may no
// longer take them; a session that says a model is not loaded is benched for it (loading-bench.ts).
// Memory only: a request in flight keeps the hub from hibernating.
import { USAGE_REJECTED, type Endpoint } from "../../schemas/relay.ts";
import { NdjsonWriter } from "./ndjson-writer.ts";
import { cancelMessage, noticeMessage, queueMessage, requestMessage, type AnswerMessage } from "./page-protocol.ts";
import { LoadingBench } from "./loading-bench.ts";
import { NOT_LOADED_ERRORS } from "./map-web-llm-error.ts";
import { moveTarget, placeRelay, promptChain, refuseOversize, type Benched, type Refusal, type RelayStart } from "./relay-dispatch.ts";
import { RelayQueue, type Queued } from "./relay-queue.ts";
import { newTally, tallyChunk, usageCheckedLine, type RelayTally } from "./relay-usage.ts";
import { mayServe, type ServeGrant } from "./serve-grant.ts";
import { contextWindowOf, type Session } from "./session.ts";

/** How long the page has to finish a cancelled generation (interrupt, then drain) before its slot is freed anyway. */
const CANCEL_GRACE_MS = 30_000;

/** What the relays need of the sessions (session-registry.ts). */
export interface RelaySessions {
  /** Sessions not silent (the silent ones are closed on the way). */
  live(): Session[];
  /** Sessions on open sockets, silent ones included. */
  open(): Session[];
  send(sessionId: string, text: string): boolean;
}

interface Relay extends Queued {
  endpoint: Endpoint;
  /** The `request` message for the page. */
  text: string;
  cancelled: boolean;
  out: NdjsonWriter;
  timer?: ReturnType<typeof setTimeout>;
  /** The id of the key the request was made with; absent: a request without a key. */
  keyId?: string;
  /** What was asked and what the page has answered so far: the bounds of the usage it may report. */
  tally: RelayTally;
  /** The page was told its usage was replaced (once per request). */
  told?: boolean;
}

/** `loadingUntil`: refused because every session that could take it is benched until then (the earliest). */
export type Opened = { ok: true; sessionId: string; body: ReadableStream<Uint8Array> } | { ok: false; refusal: Refusal; loadingUntil?: number };

export class RelaysInFlight {
  private readonly relays = new RelayQueue<Relay>();
  private readonly bench = new LoadingBench();

  constructor(private readonly sessions: RelaySessions) {}

  /** Places a request on a session (it runs now, or waits its turn there): its answer as JSON lines, or why not. */
  open(start: RelayStart): Opened {
    const endpoint = start.endpoint ?? "chat";
    const text = requestMessage(start.id, endpoint, start.body);
    const tooLarge = refuseOversize(text);
    if (tooLarge) return { ok: false, refusal: tooLarge };
    const placed = placeRelay(start, this.sessions.live(), this.relays, this.benched(start.model));
    if (!placed.ok) return placed;
    const { sessionId } = placed;
    const chain = promptChain(start);
    const r: Relay = {
      id: start.id,
      sessionId,
      model: start.model,
      endpoint,
      text,
      state: "queued",
      cancelled: false,
      out: new NdjsonWriter(() => this.cancel(start.id)),
      ...(chain?.length ? { prompt: chain.at(-1)! } : {}),
      ...(start.keyId !== undefined ? { keyId: start.keyId } : {}),
      tally: newTally(endpoint, text, start.body),
    };
    this.relays.add(r);
    this.startNext(sessionId, start.model);
    if (r.state === "queued") this.sendQueue(sessionId, start.model);
    return { ok: true, sessionId, body: r.out.body };
  }

  /** The client left (or the attempt was abandoned): a queued request disappears, a running one is interrupted. */
  cancel(id: string): void {
    const r = this.relays.get(id);
    if (!r) return;
    if (r.state === "queued") {
      this.finish(r);
      this.sendQueue(r.sessionId, r.model);
      return;
    }
    if (r.cancelled) return;
    r.cancelled = true;
    r.out.close();
    this.sessions.send(r.sessionId, cancelMessage(id));
    // The slot stays taken until the page reports the drained generation as done or failed.
    r.timer = setTimeout(() => this.release(r), CANCEL_GRACE_MS);
  }

  /** A page's chunk, done or error for one of its running requests: passed on; done and error end it. */
  answer(session: Session, msg: AnswerMessage, raw: string): void {
    const r = this.relays.get(msg.id);
    // Late messages for a request that is gone (finished, failed, cancelled and released) are ignored.
    if (!r || r.sessionId !== session.sessionId || r.state !== "running") return;
    if (msg.type === "chunk") {
      if (r.endpoint !== "embeddings") tallyChunk(r.tally, msg.data as Record<string, unknown>);
      r.out.write(this.checkedLine(r, session, msg, raw));
      return;
    }
    if (msg.type === "error" && NOT_LOADED_ERRORS.has(msg.kind)) return this.notLoaded(r, msg.kind, msg.message);
    if (msg.type === "done") this.bench.served(r.sessionId, r.model);
    // An error line is passed on with the protocol's fields only, never as the page wrote it: the
    // hub's own fields on that line (retryAfter) are the hub's.
    r.out.write(msg.type === "done" ? this.checkedLine(r, session, msg, raw) : JSON.stringify({ type: "error", id: msg.id, kind: msg.kind, message: msg.message }));
    this.release(r);
  }

  /** Running and waiting requests of a session. */
  counts(sessionId: string): { running: number; queued: number } {
    return this.relays.counts(sessionId);
  }

  /**
   * A session is gone: its running requests end with an error; waiting ones (the page never saw them)
   * move to another session with the model, or end with an error if there is none.
   */
  sessionGone(sessionId: string, why: string): void {
    this.relays.forget(sessionId);
    this.bench.forget(sessionId);
    this.rehome(this.relays.all().filter((r) => r.sessionId === sessionId), sessionId, (id) => sessionLost(id, `The browser session ${why}.`));
  }

  /**
   * A session's grant changed: the requests waiting on it that it may no longer take move to a
   * session that may (or fail as no longer servable there). The running ones finish.
   */
  regranted(sessionId: string, grant: ServeGrant): void {
    const leaving = this.relays.all().filter((r) => r.sessionId === sessionId && r.state === "queued" && !mayServe(grant, r.keyId));
    this.rehome(leaving, sessionId, (id) => sessionLost(id, "The browser session may no longer serve this request (its serve key's serves changed)."));
    // The session stays: it hears that its queues got shorter.
    for (const model of new Set(leaving.map((r) => r.model))) this.sendQueue(sessionId, model);
  }

  /**
   * The page said the model of running request `r` is not loaded: the session is benched for the
   * model, and neither `r` nor the requests waiting behind it there are sent to it again meanwhile.
   * `r` ends with the page's error, saying when the session is asked again (`retryAfter`, seconds:
   * routing reads it to decide whether the request waits); the waiting ones move to a session that
   * is not benched, or end the same way without the page hearing of them.
   */
  private notLoaded(r: Relay, kind: string, message: string): void {
    const now = Date.now();
    const retryAfter = Math.max(1, Math.ceil((this.bench.strike(r.sessionId, r.model, now) - now) / 1000));
    const line = (id: string) => JSON.stringify({ type: "error", id, kind, message, retryAfter });
    r.out.write(line(r.id));
    this.finish(r);
    const waiting = this.relays.all().filter((q) => q.sessionId === r.sessionId && q.model === r.model && q.state === "queued");
    this.rehome(waiting, r.sessionId, line);
    this.sendQueue(r.sessionId, r.model);
  }

  /** Which sessions are benched for `model` now. */
  private benched(model: string): Benched {
    const now = Date.now();
    return { now, until: (sessionId) => this.bench.until(sessionId, model, now) };
  }

  /** The line for a page message carrying usage; the page is told once when its usage was replaced. */
  private checkedLine(r: Relay, session: Session, msg: Extract<AnswerMessage, { type: "chunk" | "done" }>, raw: string): string {
    const { line, notice } = usageCheckedLine(msg, raw, r.tally, contextWindowOf(session, r.model));
    if (notice !== undefined && !r.told) {
      r.told = true;
      console.warn(`[relay] session ${r.sessionId}, request ${r.id}: ${notice}`);
      this.sessions.send(r.sessionId, noticeMessage(r.id, USAGE_REJECTED, notice));
    }
    return line;
  }

  private startNext(sessionId: string, model: string): void {
    const next = this.relays.startNext(sessionId, model);
    if (!next) return;
    if (!this.sessions.send(sessionId, next.text)) {
      next.out.write(sessionLost(next.id, "The browser session disconnected before the request could be sent."));
      this.finish(next);
      return;
    }
    this.sendQueue(sessionId, model);
  }

  /** The page is done with a running request (answered, failed, or drained after a cancel): start the next. */
  private release(r: Relay): void {
    if (!this.relays.has(r.id)) return;
    this.finish(r);
    this.startNext(r.sessionId, r.model);
  }

  private finish(r: Relay): void {
    if (r.timer !== undefined) clearTimeout(r.timer);
    this.relays.delete(r.id);
    r.out.close();
  }

  private sendQueue(sessionId: string, model: string): void {
    this.sessions.send(sessionId, queueMessage(model, this.relays.waiting(sessionId, model)));
  }

  /**
   * Requests leaving `from`: waiting ones (the page never saw them) move to another open session that
   * serves them, may take them and is not benched for their model; the rest end with `ending`'s line.
   */
  private rehome(relays: Relay[], from: string, ending: (id: string) => string): void {
    const moved = new Set<string>();
    for (const r of relays) {
      const other = r.state === "queued" ? moveTarget(r, from, this.sessions.open(), this.relays, this.benched(r.model)) : undefined;
      if (other) {
        r.sessionId = other;
        moved.add(`${other}\n${r.model}`);
        continue;
      }
      r.out.write(ending(r.id));
      this.finish(r);
    }
    for (const key of moved) {
      const [sessionId, model] = key.split("\n") as [string, string];
      this.startNext(sessionId, model);
      this.sendQueue(sessionId, model);
    }
  }
}

/** The error line a request ends with when its session is lost (as the page's `error` would read). */
function sessionLost(id: string, message: string): string {
  return JSON.stringify({ type: "error", id, kind: "SessionLost", message });
}
