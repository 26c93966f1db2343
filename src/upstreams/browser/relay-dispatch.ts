// Where a relayed request goes: of the live sessions, those that serve its model and endpoint, whose
// grant admits its key and whose model's window holds its prompt (context-fit.ts, the check routing
// makes); of those, the ones not benched for having said the model is not loaded (loading-bench.ts);
// of those, where the relay queue places it (relay-queue.ts: the engine holding the conversation,
// else the least loaded). Otherwise the refusal that says why none. Pure.
import { MAX_MESSAGE_BYTES, messageBytes, type Endpoint } from "../../schemas/relay.ts";
import { tokensFit } from "../context-fit.ts";
import { MAX_QUEUE_PER_MODEL, RelayQueue, type Queued } from "./relay-queue.ts";
import { mayServe } from "./serve-grant.ts";
import { contextWindowOf, sessionServes, type Session } from "./session.ts";

/** What the Worker sends the hub to relay one request (`POST https://hub/relay`). */
export interface RelayStart {
  id: string;
  model: string;
  /** Absent = chat. */
  endpoint?: Endpoint;
  body: Record<string, unknown>;
  /** The prompt's hashes at each message boundary (chat), so the request goes where an engine holds its conversation. */
  prompt?: string[];
  /** Who is asking: the id of the request's key (never the key); absent for a request without one. Only sessions whose grant admits it are candidates. */
  keyId?: string;
  /** The prompt's tokens at least (a low estimate from its size): sessions whose model's window is smaller are not candidates. */
  promptTokens?: number;
}

/** The hub's answer when it takes no request: an HTTP status and the JSON body openRelay reads. */
export interface Refusal {
  status: number;
  body: Record<string, unknown>;
}

/**
 * `loadingUntil`: every session that could take the request said the model is not loaded and is
 * benched until then (the earliest); the hub may hold the request until then or an announcement.
 */
export type Placement = { ok: true; sessionId: string } | { ok: false; refusal: Refusal; loadingUntil?: number };

/** Which sessions are benched for the request's model (loading-bench.ts), as of `now`. */
export interface Benched {
  until(sessionId: string): number | undefined;
  now: number;
}

/** The session queue as dispatch reads it. */
type Loads = Pick<RelayQueue<Queued>, "place" | "leastLoaded">;

/** The prompt chain placement looks at: chat requests' only. */
export function promptChain(start: RelayStart): string[] | undefined {
  return (start.endpoint ?? "chat") === "chat" && Array.isArray(start.prompt) ? start.prompt : undefined;
}

/** The refusal of a request message larger than a session accepts. */
export function refuseOversize(text: string): Refusal | undefined {
  if (messageBytes(text) <= MAX_MESSAGE_BYTES) return undefined;
  return refusal(413, { code: "request_too_large", retryable: true, message: `The request is larger than a browser session accepts (${MAX_MESSAGE_BYTES} bytes per relay message).` });
}

/** The session for `start` among `live` (sessions past their silence deadline already left out). */
export function placeRelay(start: RelayStart, live: readonly Session[], queue: Loads, benched?: Benched): Placement {
  const endpoint = start.endpoint ?? "chat";
  const ready = live.filter((s) => s.ready);
  const serving = ready.filter((s) => sessionServes(s, start.model, endpoint));
  // Only sessions whose serve key admits the asking key: as if the others did not exist.
  const admitted = serving.filter((s) => mayServe(s.grant, start.keyId));
  // Only sessions whose model's context window (announced in hello) can hold the prompt.
  const tokens = start.promptTokens;
  const candidates = tokens === undefined ? admitted : admitted.filter((s) => tokensFit(tokens, undefined, contextWindowOf(s, start.model)).fit !== "too-long");
  if (candidates.length === 0 && admitted.length > 0) {
    // Every admitted session's window is known and too small: the answer is the largest one's error.
    const largest = Math.max(...admitted.map((s) => contextWindowOf(s, start.model) ?? 0));
    const fit = tokensFit(tokens ?? 0, undefined, largest);
    // `unable`: skipped, not tried; a target with a larger context may take it.
    if (fit.fit === "too-long") return refused(400, { code: fit.error.code, param: fit.error.param, unable: true, message: fit.error.message });
  }
  const unable = endpoint === "chat" ? {} : { unable: true };
  if (candidates.length === 0 && serving.length > 0) {
    return refused(503, {
      code: "no_capacity",
      retryAfter: 5,
      ...unable,
      message: `No browser session serving ${start.model} may serve this request: the sessions serving it take only other keys' requests (their serve key's serves list).`,
    });
  }
  if (candidates.length === 0) {
    if (endpoint !== "chat" && ready.some((s) => s.models.includes(start.model))) {
      // `unable`: sessions have the model but none serves this endpoint with it (skipped, not tried).
      return refused(503, { code: "no_capacity", retryAfter: 5, unable: true, message: `No browser session serving ${start.model} can serve /v1/${endpoint} with it${endpoint === "embeddings" ? " (web-llm serves embeddings only with its embedding models)" : ""}.` });
    }
    return refused(503, { code: "no_capacity", retryAfter: 5, ...unable, message: `No browser session is serving ${start.model}. Open the Switchyard page, load the model and switch on "serve this model for the team".` });
  }
  // A session that said the model is not loaded gets none of its requests until its bench ends.
  const loaded = benched ? candidates.filter((s) => benched.until(s.sessionId) === undefined) : candidates;
  if (loaded.length === 0 && benched) {
    const until = Math.min(...candidates.map((s) => benched.until(s.sessionId)!));
    const seconds = Math.max(1, Math.ceil((until - benched.now) / 1000));
    const message = `Every browser session serving ${start.model} said the model is not loaded yet (web-llm's ModelNotLoadedError). It is asked again in ${seconds} s, or a session that announces the model takes the request: retry after that.`;
    return { ok: false, refusal: refusal(503, { code: "model_loading", retryAfter: seconds, message }), loadingUntil: until };
  }
  // Faster engines first among equals (placement takes the first of equally loaded sessions): a tab
  // that measured itself slow (a CPU one) gets a request only when the faster ones are busier.
  const bySpeed = [...loaded].sort((a, b) => announcedSpeed(b) - announcedSpeed(a));
  const best = queue.place(bySpeed.map((s) => s.sessionId), start.model, promptChain(start));
  if (!best || !RelayQueue.fits(best.load)) {
    return refused(503, {
      code: "no_capacity",
      retryAfter: 2,
      busy: true,
      message: `Every browser session serving ${start.model} is busy (${loaded.length} session(s), each with one running and ${MAX_QUEUE_PER_MODEL} waiting). Retry shortly.`,
    });
  }
  return { ok: true, sessionId: best.sessionId };
}

/**
 * Where a waiting request leaving session `from` can go: the least loaded other ready session that
 * serves its model and endpoint and whose grant admits its key (its window is not asked: the request
 * keeps no token estimate) and that is not benched for the model. `open`: every open session,
 * silent ones included.
 */
export function moveTarget(r: { model: string; endpoint: Endpoint; keyId?: string }, from: string, open: readonly Session[], queue: Loads, benched?: Benched): string | undefined {
  const serving = open
    .filter((s) => s.sessionId !== from && s.ready && sessionServes(s, r.model, r.endpoint) && mayServe(s.grant, r.keyId) && benched?.until(s.sessionId) === undefined)
    .map((s) => s.sessionId);
  return queue.leastLoaded(serving, r.model)?.sessionId;
}

function refusal(status: number, body: Record<string, unknown>): Refusal {
  return { status, body: { status, ...body } };
}

function refused(status: number, body: Record<string, unknown>): Placement {
  return { ok: false, refusal: refusal(status, body) };
}

/** A session's announced decode speed (hello's `tokensPerSecond`); one that announced none counts as fast (a GPU tab). */
function announcedSpeed(s: Session): number {
  const tps = s.capabilities?.tokensPerSecond;
  return typeof tps === "number" && Number.isFinite(tps) && tps > 0 ? tps : Number.POSITIVE_INFINITY;
}
