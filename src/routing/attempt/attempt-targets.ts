// The attempt stage: the request's targets tried in turn (tryTargets: admission, order and placement,
// retries and failover), each attempt's upstream opened and its first event read
// under the attempt's timeouts; a server whose chat parser refused the answer gives it again as raw
// text. The outcome reaches the health hub once the chosen attempt's events end.
import type { Config } from "../../config/config.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { HealthRecorder } from "../../health/health-client.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import type { AttemptContext, Upstream } from "../../upstreams/upstream.ts";
import { classifyFailure } from "../../health/classify-failure.ts";
import { conversationKey } from "../placement/conversation-key.ts";
import { promptTokensLow } from "../../upstreams/context-fit.ts";
import { isolateState } from "../isolate/isolate-state.ts";
import { learnFromUsage } from "../placement/ledger-updates.ts";
import { prefixesOf, promptParts } from "../placement/prompt-prefixes.ts";
import type { PlacementRequest } from "../placement/rank-servers.ts";
import type { Deadlines } from "../../lib/deadlines.ts";
import { EventReader } from "./event-reader.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import { tryTargets, type Tried } from "./try-targets.ts";
import { adapterOf, capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { EventPull } from "../../events/event-source.ts";
import type { AttemptTracer } from "../../observability/request-trace.ts";
import type { RefusalBudget } from "./refusal-budget.ts";

/** A server's count of a prompt near its window answers within this, or the prompt is sent uncounted. */
const COUNT_TIMEOUT_MS = 2000;

/** An attempt's span, ended with "ok" or the error code its answer ended with. */
type AttemptSpanEnd = ReturnType<AttemptTracer["attemptStarted"]>;

export interface Started {
  target: Target;
  attempts: number;
  first: UpstreamEvent;
  events: EventPull;
  startedAt: number;
  firstEventAt: number;
  /** The upstream the answer came from (a raw replay asks it again). */
  upstream: Upstream;
  /** Set when the events are the model's output as written (the server's chat parser refused it): the end of the prompt they continue. */
  raw?: { generationPrompt: string };
}

export interface AttemptOptions {
  request: ChatRequest;
  requestId: string;
  clientRequestId?: string;
  config: Config;
  env: EnvVars;
  /** Aborted when the client leaves: stops the current attempt and any further ones. */
  signal: AbortSignal;
  /** The request's timer: every attempt's timeouts are deadlines on it. */
  deadlines: Deadlines;
  upstreamFor(target: Target): Upstream;
  /** The id of the request's key, for upstreams that choose who may serve it (browser sessions), and its turn in the admission queue. */
  keyId?: string;
  /** The key's admission priority (default 0). */
  priority?: number;
  /** Slots left free on each server (a batch line: batch.keepFreeSlots). */
  keepFree?: number;
  /** Where health signals and the outcome are sent after the response (ctx.waitUntil). */
  waitUntil?(p: Promise<unknown>): void;
  /** The request's trace, when traces are exported: each attempt is a span, its traceparent sent upstream. */
  trace?: AttemptTracer;
  /** Generations after a chat parser's refusal, and the refused attempts' charge (none: unlimited, uncharged). */
  refusals?: RefusalBudget;
}

/**
 * Tries `targets` until one produces its first event: tryTargets' loop opens each attempt here
 * (openAttempt). The outcome reaches the health hub once its events end.
 */
export async function attemptTargets(targets: Target[], opts: AttemptOptions): Promise<Started> {
  const { config } = opts;
  // Each computed once, and only when asked: sizing a prompt needs its parts, placing it their hashes.
  const messages = Array.isArray(opts.request.messages) ? opts.request.messages : [];
  const maxTokens = opts.request.max_completion_tokens ?? opts.request.max_tokens;
  let parts: string[] | undefined;
  const partsOnce = () => (parts ??= promptParts(messages, opts.request.tools));
  let placement: PlacementRequest | undefined;
  const placementOnce = () => (placement ??= { key: conversationKey(messages), prefixes: prefixesOf(partsOnce()), ...(typeof maxTokens === "number" ? { maxTokens } : {}) });
  const askContext = () => ({ env: opts.env, requestId: opts.requestId, timeoutMs: Math.min(COUNT_TIMEOUT_MS, config.timeouts.responseStartMs), signal: opts.signal });
  const tried = await tryTargets(
    targets,
    {
      config,
      env: opts.env,
      model: opts.request.model,
      placement: placementOnce,
      size: () => ({ chars: partsOnce().reduce((n, p) => n + p.length, 0), prefixes: placementOnce().prefixes, ...(typeof maxTokens === "number" ? { maxTokens } : {}) }),
      serverCounts: {
        // Asked only for a prompt near a server's window: its template and tokenizer, two short local calls.
        count: async (t) => adapterOf(t).countPromptTokens?.(t, opts.request, askContext()),
        window: async (t) => (await adapterOf(t).describeModel?.(t, askContext()))?.contextWindow,
      },
      signal: opts.signal,
      waitUntil: opts.waitUntil,
      queue: { key: opts.keyId ?? null, priority: opts.priority ?? 0, ...(opts.keepFree ? { keepFree: opts.keepFree } : {}) },
    },
    async (target, signal, startedAt): Promise<Opened & { span?: AttemptSpanEnd }> => {
      // A target that places conversations among its own engines gets the prompt's chain of hashes,
      // and its low token estimate for the engines' windows (tokenizer unknown).
      const byPrompt = capabilitiesOf(target).placesByPrompt ? { promptChain: placementOnce().prefixes.map((p) => p.hash), promptTokens: promptTokensLow(placementOnce().prefixes.at(-1)?.chars ?? 0) } : {};
      const span = opts.trace?.attemptStarted(target.name, capabilitiesOf(target).server?.url);
      const ctx: AttemptContext = { requestId: opts.requestId, ...(opts.clientRequestId !== undefined ? { clientRequestId: opts.clientRequestId } : {}), signal, responseStartMs: config.timeouts.responseStartMs, deadlines: opts.deadlines, env: opts.env, ...byPrompt, ...(opts.keyId !== undefined ? { keyId: opts.keyId } : {}), ...(span ? { traceparent: span.traceparent } : {}) };
      try {
        return { ...(await openWithRawFallback(opts.upstreamFor(target), target, ctx, opts, startedAt)), ...(span ? { span } : {}) };
      } catch (e) {
        span?.ended(e instanceof ProxyError ? e.code : "upstream_error");
        throw e;
      }
    },
  );
  const { target, value, startedAt, succeededAt: firstEventAt } = tried;
  observeEnd(value.events, target, tried.health, tried.requestStart, firstEventAt, tried.placed, value.span);
  // The raw text was a second request to the same server: a try of its own.
  const attempts = tried.attempts + (value.raw ? 1 : 0);
  return { target, attempts, first: value.first, events: value.events, startedAt, firstEventAt, upstream: value.upstream, ...(value.raw ? { raw: value.raw } : {}) };
}

/** An attempt's opened answer: its reader and first event, the upstream, and whether it is raw text. */
interface Opened {
  first: UpstreamEvent;
  events: EventReader;
  upstream: Upstream;
  raw?: { generationPrompt: string };
}

/**
 * `upstream`'s answer for the attempt; when the server generated one and its chat parser refused it
 * before any of it was sent, the same server's raw text, which the rewriter reads (docs/tool-calls.md).
 * The refused answer was generated, to its bound at most: charged that (opts.refusals), and the raw
 * text is a generation of its own, asked only when one was reserved for it.
 */
async function openWithRawFallback(upstream: Upstream, target: Target, ctx: AttemptContext, opts: AttemptOptions, startedAt: number): Promise<Opened> {
  try {
    return { ...(await openAttempt(upstream, target, ctx, opts, startedAt)), upstream };
  } catch (e) {
    if (!(e instanceof ProxyError && e.unparsed)) throw e;
    opts.refusals?.refused(opts.request);
    const raw = upstream.withoutChatParser?.();
    if (!raw || opts.refusals?.take() === false) throw e;
    const got = await openAttempt(raw, target, ctx, opts, startedAt);
    return { ...got, upstream, raw: { generationPrompt: raw.generationPrompt ?? "" } };
  }
}

/**
 * `from`'s first event for `target`, its events read under the attempt's timeouts. Throws (a
 * ProxyError) when it fails before one: the attempt may then go elsewhere.
 */
export async function openAttempt(from: Upstream, target: Target, ctx: AttemptContext, opts: Pick<AttemptOptions, "request" | "config" | "deadlines">, startedAt: number): Promise<{ first: UpstreamEvent; events: EventReader }> {
  const events = new EventReader(await from.open(opts.request, ctx), target.name, opts.config.timeouts, startedAt, opts.deadlines, ctx.signal);
  const first = await events.next();
  if (!first) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} ended its answer without sending anything.` });
  if (first.type === "error") {
    events.cancel();
    throw ProxyError.fromInfo(first.error);
  }
  return { first, events };
}

/** The outcome is known once the chosen attempt's events end: report it (and mid-stream breaks). */
function observeEnd(events: EventReader, target: Target, health: HealthRecorder, requestStart: number, firstEventAt: number, placed: Tried<unknown>["placed"], span?: AttemptSpanEnd): void {
  let promptTokens: number | undefined;
  let completionTokens: number | undefined;
  events.observer = {
    event(e) {
      if (e.type === "usage") {
        promptTokens = e.usage.promptTokens;
        completionTokens = e.usage.completionTokens;
        if (placed) learnFromUsage(isolateState().ledger, placed.server, placed.chars, e.usage, e.timings);
      }
    },
    end(how) {
      placed?.end(Date.now());
      let code = "ok";
      if ("cancelled" in how) code = "client_closed_request";
      else if (!how.ok) {
        code = how.error.code;
        const server = capabilitiesOf(target).server;
        if (how.broken && server) health.failure(server.url, classifyFailure(how.error));
      }
      span?.ended(code);
      health.finish({
        target: target.name,
        code,
        firstEventMs: firstEventAt - requestStart,
        totalMs: Date.now() - requestStart,
        ...(promptTokens !== undefined ? { promptTokens } : {}),
        ...(completionTokens !== undefined ? { completionTokens } : {}),
      });
    },
  };
}
