import type { Context } from "hono";
import { meterRun } from "../auth/meter.ts";
import type { AppEnv } from "../auth/app-env.ts";
import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { StreamStart } from "../responders/sse-response.ts";
import type { SwitchyardExtension } from "../events/switchyard-extension.ts";
import { pullThrough } from "../events/pull-through.ts";
import type { ToolCallReport } from "../toolcalls/index.ts";
import { applyToolCallPolicy, type RewrittenAttempt } from "./tool-call-policy.ts";
import { toolCallEventsFor } from "./rewrite-context.ts";
import { maxResumes, minToolCallScore } from "../config/config.ts";
import { resumeBlocker } from "./resume/continuation-request.ts";
import { BrowserUpstream } from "../upstreams/browser/browser-upstream.ts";
import { LlamaUpstream } from "../upstreams/llama/llama-upstream.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import { Deadlines } from "../lib/deadlines.ts";
import { planTargetsFor } from "./plan-targets.ts";
import { runAttempts, type Started } from "./run-attempts.ts";
import type { Target } from "./target.ts";

/** What every API surface (chat, responses, messages…) needs to answer from the event stream. */
export interface ChatRun {
  start: Promise<StreamStart>;
  /** `x_switchyard` for the final chunk or body (tool-call scores are complete once finish has passed). */
  extension(): SwitchyardExtension;
  /** Options shared by sseResponse and jsonResponse. */
  common: {
    start: Promise<StreamStart>;
    commitMs: number;
    deadlines: Deadlines;
    heartbeatMs: number;
    abort(): void;
    waitUntil(p: Promise<unknown>): void;
  };
}

export interface StartOptions {
  /**
   * The upstream for each target, for endpoints whose upstream request is not this chat request
   * (text completions: the upstream carries its own body). `sent` is the chat request as the meter
   * bound it: its max_tokens is what the upstream body must carry. Default: chat upstreams.
   */
  upstreamFor?: (target: Target, sent: ChatRequest) => Upstream;
  /** What counts as the prompt for usage estimates (default: the messages). */
  prompt?: () => unknown;
}

/**
 * Plans the targets for a validated chat request and starts trying them; the caller encodes the
 * resulting events in its own wire format. Throws model_not_found before anything starts.
 */
export function startChat(c: Context<AppEnv>, config: Config, asked: ChatRequest, options: StartOptions = {}): ChatRun {
  // The request as sent: a key with a day limit gives a request without max_tokens its default one.
  const request = c.get("meter")?.bound(asked) ?? asked;
  const given = options.upstreamFor;
  const upstreamFor = given ? (t: Target) => given(t, request) : chatUpstreamFor;
  c.get("meter")?.checkModel(request.model);
  // The caller's browser policy is applied here, to the plan: a denied request never reaches a session.
  const key = c.get("principal");
  const targets = planTargetsFor(config, request.model, key);
  const requestId = c.get("requestId");

  // One controller for everything this request started upstream: the client leaving (noticed by a
  // failed write, or the request signal where the runtime delivers it) aborts it.
  const work = new AbortController();
  // Every timeout of this request on one timer; the commit grace is its nearest deadline.
  const deadlines = new Deadlines(config.timeouts.commitMs);
  const abort = () => work.abort();
  c.req.raw.signal?.addEventListener?.("abort", abort, { once: true });

  let started: Started | undefined;
  let attempts = 0;
  let reports: () => ToolCallReport[] = () => [];
  let belowMinScore = false;
  const minScore = minToolCallScore(config, request.model);
  const extension = (): SwitchyardExtension => {
    const scores = reports();
    const resuming = started?.resuming;
    return {
      target: resuming?.current ?? started?.target.name ?? "",
      attempts: attempts + (resuming?.extraAttempts ?? 0),
      ...(resuming?.resumes.length ? { resumes: resuming.resumes } : {}),
      ...(started ? { timings: { first_event_ms: started.firstEventAt - started.startedAt, total_ms: Date.now() - started.startedAt } } : {}),
      ...(scores.length ? { tool_calls: scores.map(({ index, id, score, problems }) => ({ index, id, score, problems })) } : {}),
      ...(belowMinScore || (minScore > 0 && scores.some((r) => r.score < minScore)) ? { policy: "below_min_score" } : {}),
    };
  };
  // Only a chat request can be continued as a trailing assistant message; text completions cannot.
  const resume = options.upstreamFor ? undefined : { targets, maxResumes: maxResumes(config, request.model), blocked: resumeBlocker(request) };
  const attemptOptions = (upstream: (t: Target) => Upstream, resumable = true) => ({
    request,
    requestId,
    config,
    env: c.env,
    signal: work.signal,
    deadlines,
    upstreamFor: upstream,
    ...(key ? { keyId: key.id, priority: key.priority } : {}),
    ...(resume && resumable ? { resume } : {}),
    waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
  });
  const headersOf = () => ({ "x-switchyard-target": started?.target.name ?? "", "x-switchyard-attempts": String(attempts) });
  const rewrites = Boolean(request.tools?.length) && request.tool_choice !== "none";

  // An attempt's events through the tool-call rewriter: the tools' calls read, or (raw text, with no
  // calls to read) only the reasoning split off and the framing dropped.
  const rewritten = async (s: Started): Promise<RewrittenAttempt & { started: Started }> => {
    const rewrite = toolCallEventsFor(request, s.raw?.generationPrompt);
    // Tool calls written as text become real tool_calls; plain text still flows at once.
    const events = pullThrough(s.first, s.events, rewrite);
    const first = await events.next();
    if (!first) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${s.target.name} ended its answer without sending anything.` });
    return { target: s.target, first, events, reports: () => rewrite.toolCalls, started: s };
  };
  // One target (or the whole plan), its events through the tool-call rewriter.
  const startRewritten = async (plan: Target[], upstream: (t: Target) => Upstream, constrained = false): Promise<RewrittenAttempt> =>
    // A constrained retry's grammar (built from the tools) would start over on a continuation.
    rewritten(await runAttempts(plan, attemptOptions(upstream, !constrained)));

  // A keyed request's reservation, usage and slot follow the events (src/auth/meter.ts); a policy
  // retry may generate a second answer, so that much is reserved.
  const generations = rewrites && minScore > 0 ? 2 : 1;
  const start: Promise<StreamStart> = meterRun(c.get("meter"), request, options.prompt ?? (() => request.messages), async () => {
    if (!rewrites) {
      const s = await runAttempts(targets, attemptOptions(upstreamFor));
      started = s;
      attempts = s.attempts;
      if (!s.raw) return { first: s.first, events: s.events, headers: headersOf() };
      const a = await rewritten(s);
      reports = a.reports;
      return { first: a.first, events: a.events, headers: headersOf() };
    }
    if (minScore <= 0) {
      const a = (await startRewritten(targets, upstreamFor)) as RewrittenAttempt & { started: Started };
      started = a.started;
      attempts = a.started.attempts;
      reports = a.reports;
      return { first: a.first, events: a.events, headers: headersOf() };
    }
    const outcome = await applyToolCallPolicy({
      targets,
      minScore,
      stream: request.stream === true,
      start: (target, constrained) => startRewritten([target], constrained ? promptModeUpstreamFor : upstreamFor, constrained),
      onDiscard: (events) => c.get("meter")?.chargeDiscarded(events, JSON.stringify(request.messages).length),
    });
    const a = outcome.attempt as RewrittenAttempt & { started: Started };
    started = a.started;
    attempts = outcome.attempts;
    reports = a.reports;
    belowMinScore = outcome.belowMinScore;
    return { first: a.first, events: a.events, headers: headersOf() };
  }, generations);

  return {
    start,
    extension,
    common: {
      start,
      commitMs: config.timeouts.commitMs,
      deadlines,
      heartbeatMs: config.timeouts.heartbeatMs,
      abort,
      waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
    },
  };
}

export function chatUpstreamFor(target: Target): Upstream {
  if (target.kind === "llama") return new LlamaUpstream(target.name, target);
  return new BrowserUpstream(target.name, target);
}

/** The constrained retry: the same llama-server in prompt mode (tools in the prompt, a grammar). */
function promptModeUpstreamFor(target: Target): Upstream {
  return target.kind === "llama" ? new LlamaUpstream(target.name, { ...target, tools: "prompt" }) : chatUpstreamFor(target);
}
