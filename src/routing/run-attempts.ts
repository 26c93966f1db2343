import type { Config } from "../config/config.ts";
import type { EnvVars } from "../config/env-vars.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { HealthRecorder } from "../health/health-client.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { AttemptContext, Upstream } from "../upstreams/upstream.ts";
import { classifyFailure } from "../health/classify-failure.ts";
import { conversationKey } from "./placement/conversation-key.ts";
import { promptTokensLow } from "./context-fit.ts";
import { learnFromUsage } from "./placement/isolate-ledger.ts";
import { prefixesOf, promptParts } from "./placement/prompt-prefixes.ts";
import type { PlacementRequest } from "./placement/rank-servers.ts";
import type { Deadlines } from "../lib/deadlines.ts";
import { EventReader } from "./event-reader.ts";
import type { Target } from "./target.ts";
import { tryTargets, type Tried } from "./try-targets.ts";
import { continuationRequest } from "./resume/continuation-request.ts";
import { ResumingEvents, type Continuation } from "./resume/resuming-events.ts";
import { pullThrough } from "../events/pull-through.ts";
import { toolCallEventsFor } from "./rewrite-context.ts";
import { countTextTokens } from "../upstreams/llama/count-llama-tokens.ts";
import { CONTINUATION_PRIORITY } from "./admission/queue-place.ts";
import type { EventPull } from "../events/event-source.ts";

export interface Started {
  target: Target;
  attempts: number;
  first: UpstreamEvent;
  events: EventPull;
  startedAt: number;
  firstEventAt: number;
  /** Set when the answer may be continued elsewhere: who writes it now, its continuations, their tries. */
  resuming?: ResumingEvents;
  /**
   * Set when the events are the model's output as written (the server's chat parser refused it):
   * the rewriter must read them, from the end of the prompt they continue.
   */
  raw?: { generationPrompt: string };
}

export interface AttemptOptions {
  request: ChatRequest;
  requestId: string;
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
  /** Called as each attempt starts, so attempts can be reported even on failure. */
  onAttempt?(n: number, target: Target): void;
  /** Where health signals and the outcome are sent after the response (ctx.waitUntil). */
  waitUntil?(p: Promise<unknown>): void;
  /**
   * Continuing the answer on another of `targets` if its upstream fails mid-answer (only llama-servers
   * can continue one; src/routing/resume/). Absent: the failure is the answer's end.
   */
  resume?: { targets: Target[]; maxResumes: number; blocked: string | null };
}

/**
 * Tries the targets (tryTargets: order, retries, failover, health signals) until one produces its
 * first event; the request's outcome reaches the health hub once that attempt's events end.
 */
export async function runAttempts(targets: Target[], opts: AttemptOptions): Promise<Started> {
  const { config } = opts;
  // Each computed once, and only when asked: sizing a prompt needs its parts, placing it their hashes.
  const messages = Array.isArray(opts.request.messages) ? opts.request.messages : [];
  const maxTokens = opts.request.max_completion_tokens ?? opts.request.max_tokens;
  let parts: string[] | undefined;
  const partsOnce = () => (parts ??= promptParts(messages, opts.request.tools));
  let placement: PlacementRequest | undefined;
  const placementOnce = () => (placement ??= { key: conversationKey(messages), prefixes: prefixesOf(partsOnce()), ...(typeof maxTokens === "number" ? { maxTokens } : {}) });
  const tried = await tryTargets(
    targets,
    {
      config,
      env: opts.env,
      model: opts.request.model,
      placement: placementOnce,
      size: () => ({ chars: partsOnce().reduce((n, p) => n + p.length, 0), ...(typeof maxTokens === "number" ? { maxTokens } : {}) }),
      signal: opts.signal,
      onAttempt: opts.onAttempt,
      waitUntil: opts.waitUntil,
      queue: { key: opts.keyId ?? null, priority: opts.priority ?? 0 },
    },
    async (target, signal, startedAt) => {
      const upstream = opts.upstreamFor(target);
      // A browser hub places the conversation among sessions by its prompt's chain of hashes, and
      // skips sessions whose model's window cannot hold the prompt (tokenizer unknown: the low estimate).
      const browser = target.kind === "browser" ? { promptChain: placementOnce().prefixes.map((p) => p.hash), promptTokens: promptTokensLow(placementOnce().prefixes.at(-1)?.chars ?? 0, undefined) } : {};
      const ctx = { requestId: opts.requestId, signal, responseStartMs: config.timeouts.responseStartMs, deadlines: opts.deadlines, env: opts.env, ...browser, ...(opts.keyId !== undefined ? { keyId: opts.keyId } : {}) };
      try {
        return { ...(await firstEventOf(upstream, target, ctx, opts, startedAt)), upstream };
      } catch (e) {
        // The server generated an answer and its chat parser refused it, before any of it was sent:
        // the same server gives the raw text, which the rewriter reads (docs/tool-calls.md).
        const raw = e instanceof ProxyError && e.unparsed ? upstream.withoutChatParser?.() : undefined;
        if (!raw) throw e;
        const got = await firstEventOf(raw, target, ctx, opts, startedAt);
        return { ...got, upstream, generationPrompt: raw.generationPrompt ?? "" };
      }
    },
  );
  const { target, value, startedAt, succeededAt: firstEventAt } = tried;
  observeEnd(value.events, target, tried.health, tried.requestStart, firstEventAt, tried.placed);
  const raw = "generationPrompt" in value ? { generationPrompt: value.generationPrompt } : undefined;
  // The raw text was a second request to the same server: a try of its own.
  const attempts = tried.attempts + (raw ? 1 : 0);
  const started: Started = { target, attempts, first: value.first, events: value.events, startedAt, firstEventAt, ...(raw ? { raw } : {}) };
  const resume = opts.resume;
  if (!resume || resume.maxResumes <= 0 || resume.blocked !== null) return started;
  const offersTools = Boolean(opts.request.tools?.length) && opts.request.tool_choice !== "none";
  // Only a llama-server can continue (web-llm refuses a trailing assistant message); a prompt-mode one
  // would constrain the continuation with a tool grammar started over.
  const canContinue = (t: Target) => t.kind === "llama" && !(offersTools && t.tools === "prompt");
  // Nothing to continue on (a browser session alone): the events are not wrapped at all. A server
  // alone continues its own answer only when its chat parser refused the rest (error.unparsed).
  if (!resume.targets.some(canContinue)) return started;
  // Targets by identity: two targets may share a name (one host, two paths).
  const failed = new Set<Target>();
  let writing: Target = target;
  const resuming = new ResumingEvents(value.first, value.events, target.name, {
    maxResumes: resume.maxResumes,
    blocked: resume.blocked,
    async open(written, error) {
      // Reasoning alone, refused by the chat parser of the server that wrote it: the same answer
      // again, as raw text (text written is continued instead: a replay would reproduce what the
      // parser refused, a stray byte included, and the raw completion is parsed for content too).
      if (error.unparsed && writing === target && written.text === "") return replayRaw(value.upstream, target, opts);
      const request = continuationRequest(opts.request, written);
      if (!request) return null;
      // A server whose parser refused the model's output is not broken: it may write the rest itself.
      if (!error.unparsed) failed.add(writing);
      const rest = resume.targets.filter((t) => canContinue(t) && !failed.has(t));
      if (!rest.length) return null;
      // First in line if every slot is taken: this answer is already under way.
      const s = await runAttempts(rest, { ...opts, request, resume: undefined, priority: CONTINUATION_PRIORITY });
      writing = s.target;
      // The prefill's tokens on the continuing server, for the answer's prompt_tokens: asked beside
      // the continuation, which does not wait for it (only its usage, at the end, does, at most the
      // count's 1 s timeout).
      const prefillTokens = s.target.kind === "llama" ? countTextTokens(s.target, s.target.name, written.text, { env: opts.env, requestId: opts.requestId, timeoutMs: 1000, signal: opts.signal }).catch(() => undefined) : undefined;
      return { target: s.target.name, first: s.first, events: s.events, attempts: s.attempts, ...(prefillTokens ? { prefillTokens } : {}) };
    },
  });
  return { ...started, events: resuming, resuming };
}

/**
 * `from`'s first event for `target`, its events read under the attempt's timeouts. Throws (a
 * ProxyError) when it fails before one: the attempt may then go elsewhere.
 */
async function firstEventOf(from: Upstream, target: Target, ctx: AttemptContext, opts: AttemptOptions, startedAt: number): Promise<{ first: UpstreamEvent; events: EventReader }> {
  const events = new EventReader(await from.open(opts.request, ctx), target.name, opts.config.timeouts, startedAt, opts.deadlines, ctx.signal);
  const first = await events.next();
  if (!first) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} ended its answer without sending anything.` });
  if (first.type === "error") {
    events.cancel();
    throw ProxyError.fromInfo(first.error);
  }
  return { first, events };
}

/**
 * The answer `upstream` (the chat endpoint of `target`) wrote and its parser refused, again from its
 * start: the same request as raw text (its seed makes it the same text), read by the rewriter. Null
 * when the upstream has no raw form; a throw when the replay fails before its first event.
 */
async function replayRaw(upstream: Upstream, target: Target, opts: AttemptOptions): Promise<Continuation | null> {
  const raw = upstream.withoutChatParser?.();
  if (!raw) return null;
  const ctx = { requestId: opts.requestId, signal: opts.signal, responseStartMs: opts.config.timeouts.responseStartMs, deadlines: opts.deadlines, env: opts.env };
  const { first, events: reader } = await firstEventOf(raw, target, ctx, opts, Date.now());
  const events = pullThrough(first, reader, toolCallEventsFor(opts.request, raw.generationPrompt ?? ""));
  const head = await events.next();
  if (!head) return null;
  return { target: target.name, first: head, events, attempts: 1, replay: true };
}

/** The outcome is known once the chosen attempt's events end: report it (and mid-stream breaks). */
function observeEnd(events: EventReader, target: Target, health: HealthRecorder, requestStart: number, firstEventAt: number, placed: Tried<unknown>["placed"]): void {
  let promptTokens: number | undefined;
  let completionTokens: number | undefined;
  events.observer = {
    event(e) {
      if (e.type === "usage") {
        promptTokens = e.usage.promptTokens;
        completionTokens = e.usage.completionTokens;
        if (placed) learnFromUsage(placed.server, placed.chars, e.usage, e.timings);
      }
    },
    end(how) {
      placed?.end(Date.now());
      let code = "ok";
      if ("cancelled" in how) code = "client_closed_request";
      else if (!how.ok) {
        code = how.error.code;
        if (how.broken && target.kind === "llama") health.failure(target.url, classifyFailure(how.error));
      }
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
