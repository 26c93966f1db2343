// The chat pipeline, stage by stage: every API surface (chat, Responses, Messages, completions,
// compaction) answers through runChat, and this file is the one place the stages are put in order.
//
//   1. plan        the model's targets under the caller's browser policy      plan-targets.ts
//   2. admit       a turn in the model's line when every slot is taken         admission/ (the attempt loop waits)
//   3. order/place the targets' order: health, balance, prompt-cache placement placement/ (order-targets.ts)
//   4. attempt     each target in turn: gate, open, first event, retries       attempt/ (try-targets.ts: the loop)
//   5. continue    an answer whose upstream fails mid-answer goes on elsewhere continuation/ (continue-on-failure.ts)
//   6. rewrite     tool calls written as text become tool_calls                rewrite/ (rewrite-stage.ts)
//                  (and the min-score policy retries a poor call)              rewrite/tool-call-policy.ts
//   7. meter       the key's reservation, usage and slot follow the events     auth/meter.ts (meterRun)
//                  (and the request log's facts, when the log or traces are on) observability/run-facts.ts
//   8. encode      the caller's encoder turns the events into its wire format  api/, responders/
import { meterRun } from "../auth/meter.ts";
import type { Config } from "../config/config.ts";
import { maxResumes, minToolCallScore } from "../config/config.ts";
import { Deadlines } from "../lib/deadlines.ts";
import type { AnswerObserver } from "../responders/answer-observer.ts";
import type { StreamStart } from "../responders/sse-response.ts";
import type { SwitchyardExtension } from "../events/switchyard-extension.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { ToolCallReport } from "../toolcalls/index.ts";
import { adapterOf, capabilitiesOf } from "../upstreams/registry/adapters.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import { attemptTargets, type AttemptOptions, type Started } from "./attempt/attempt-targets.ts";
import { planTargetsFor } from "./plan-targets.ts";
import type { RequestScope } from "./request-scope.ts";
import { admissionLevel } from "./admission/service-class.ts";
import { continueOnFailure, type ContinuationPlan } from "./continuation/continue-on-failure.ts";
import { continuationBlocker } from "./continuation/continuation-request.ts";
import { refusalBudget } from "./attempt/refusal-budget.ts";
import type { ContinuingEvents } from "./continuation/continuing-events.ts";
import { offersTools, rewriteOrFail, type RewrittenAnswer } from "./rewrite/rewrite-stage.ts";
import type { Target } from "./target.ts";
import { ToolCallPolicy, type PolicyOutcome, type RewrittenAttempt } from "./rewrite/tool-call-policy.ts";

/** What every API surface needs to answer from the event stream. */
export interface ChatRun {
  start: Promise<StreamStart>;
  /** `x_switchyard` for the final chunk or body (tool-call scores are complete once finish has passed). */
  extension(): SwitchyardExtension;
  /** Options shared by sseResponse and jsonResponse. */
  common: {
    start: Promise<StreamStart>;
    /** The key's reservation (src/auth/meter.ts), when the caller has a meter: the commit grace starts once it is settled. */
    admitted?: Promise<unknown>;
    commitMs: number;
    deadlines: Deadlines;
    heartbeatMs: number;
    abort(): void;
    waitUntil(p: Promise<unknown>): void;
    observe?: AnswerObserver;
  };
}

export interface RunOptions {
  /**
   * The upstream for each target, for endpoints whose upstream request is not this chat request
   * (text completions: the upstream carries its own body). `sent` is the chat request as the meter
   * bound it: its max_tokens is what the upstream body must carry. Default: the target's chat.
   * Such an answer is never continued (only a chat can take a trailing assistant message).
   */
  upstreamFor?: (target: Target, sent: ChatRequest) => Upstream;
  /** What counts as the prompt for usage estimates (default: the messages). */
  prompt?: () => unknown;
}

/** The answer being delivered: the attempt it came from, its events after the rewrite, and its scores. */
interface Delivered {
  started: Started & { continuing?: ContinuingEvents };
  answer: RewrittenAnswer;
  attempts: number;
  belowMinScore: boolean;
}

/**
 * Runs the pipeline for a validated chat request; the caller encodes the resulting events in its
 * own wire format. Throws model_not_found (and the meter's refusals) before anything starts.
 */
export function runChat(scope: RequestScope, config: Config, asked: ChatRequest, options: RunOptions = {}): ChatRun {
  // 1. plan. The request as sent: a key with a day limit gives a request without max_tokens its default one.
  const request = scope.meter?.bound(asked) ?? asked;
  scope.facts?.asked(request.model, request.stream === true);
  scope.meter?.checkModel(request.model);
  const targets = planTargetsFor(config, request.model, scope.key);
  const given = options.upstreamFor;
  const upstreamFor = given ? (t: Target) => given(t, request) : (t: Target) => adapterOf(t).chat(t);

  // One controller for everything this request started upstream: the client leaving (noticed by a
  // failed write, or the request signal where the runtime delivers it) aborts it.
  const work = new AbortController();
  // Every timeout of this request on one timer; the commit grace is its nearest deadline.
  const deadlines = new Deadlines(config.timeouts.commitMs);
  const abort = () => work.abort();
  scope.signal?.addEventListener?.("abort", abort, { once: true });

  // A server's chat parser may refuse an answer it generated (llama-server): one more generation (a
  // continuation or the raw text) may follow, reserved below; the refused attempt is charged its bound.
  const mayRefuse = !given && targets.some((t) => capabilitiesOf(t).continues !== null);
  const refusals = refusalBudget(1, request, (tokens) => scope.meter?.chargeGenerated(tokens));
  // A batch line leaves batch.keepFreeSlots of each server free for interactive requests.
  const keepFree = scope.serviceClass === "batch" ? config.batch.keepFreeSlots : 0;
  const attemptOptions = (upstream: (t: Target) => Upstream): AttemptOptions => ({ ...scopeOptions(scope), keepFree, request, config, signal: work.signal, deadlines, upstreamFor: upstream, refusals });
  // Only a chat request can be continued as a trailing assistant message; text completions cannot.
  const continuation: ContinuationPlan | undefined = given ? undefined : { targets, maxResumes: maxResumes(config, request.model), blocked: continuationBlocker(request) };
  const minScore = minToolCallScore(config, request.model);

  /** 2–6 for one plan: admitted, ordered and attempted; made continuable; rewritten. */
  const answerFrom: AnswerFrom = async (plan, upstream, continuable) => {
    const opts = attemptOptions(upstream);
    const attempted = await attemptTargets(plan, opts);
    const started = continuation && continuable ? continueOnFailure(attempted, opts, continuation) : attempted;
    // Capture keeps the model's own text beside the answer, when the rewriter may change it.
    const raw = scope.facts && offersTools(request) ? scope.facts.rawOf(started) : started;
    const answer = await rewriteOrFail(request, raw, started.target.name);
    return { started, answer };
  };

  let delivered: Delivered | undefined;
  const deliver = async (): Promise<Delivered> => {
    if (minScore <= 0 || !offersTools(request)) {
      const { started, answer } = await answerFrom(targets, upstreamFor, true);
      return { started, answer, attempts: started.attempts, belowMinScore: false };
    }
    return deliverUnderPolicy(targets, minScore, request, scope, upstreamFor, answerFrom);
  };

  const headersOf = () => ({ "x-switchyard-target": delivered?.started.target.name ?? "", "x-switchyard-attempts": String(delivered?.attempts ?? 0) });
  // 7. meter. A policy retry may generate a second answer, and a refusal one more: that much is reserved.
  const generations = (offersTools(request) && minScore > 0 ? 2 : 1) + (mayRefuse ? 1 : 0);
  const begin = async (): Promise<StreamStart> => {
    delivered = await deliver();
    return { first: delivered.answer.first, events: delivered.answer.events, headers: headersOf() };
  };
  // Without a keyed caller there is nothing to reserve or count: the run starts as it is.
  const metered = scope.meter ? meterRun(scope.meter, request, options.prompt ?? (() => request.messages), begin, generations) : { start: begin(), reserved: undefined };

  // 8. encode: the caller's. What it reports beside the events:
  const extension = (): SwitchyardExtension => extensionOf(delivered, minScore);

  // What the request log and the traces read of the answer: the responder tells it each event as it
  // encodes it, and how the delivery ended (common.observe).
  const start = metered.start;
  scope.facts?.follow(extension);

  return {
    start,
    extension,
    common: { start, ...(metered.reserved ? { admitted: metered.reserved } : {}), commitMs: config.timeouts.commitMs, deadlines, heartbeatMs: config.timeouts.heartbeatMs, abort, waitUntil: scope.waitUntil, ...(scope.facts ? { observe: scope.facts } : {}) },
  };
}

/** What the attempt stage takes from the request's scope. */
function scopeOptions(scope: RequestScope): Pick<AttemptOptions, "requestId" | "clientRequestId" | "env" | "keyId" | "priority" | "waitUntil" | "trace"> {
  return {
    requestId: scope.requestId,
    ...(scope.clientRequestId !== undefined ? { clientRequestId: scope.clientRequestId } : {}),
    env: scope.env,
    ...(scope.key ? { keyId: scope.key.id } : {}),
    // The class first (service_tier, or batch), then the key's priority inside it.
    priority: admissionLevel(scope.serviceClass ?? "default", scope.key?.priority ?? 0),
    waitUntil: scope.waitUntil,
    ...(scope.trace ? { trace: scope.trace } : {}),
  };
}

/** Stages 2–6 for one plan (`continuable`: the answer may be continued on another target). */
type AnswerFrom = (plan: Target[], upstream: (t: Target) => Upstream, continuable: boolean) => Promise<{ started: Delivered["started"]; answer: RewrittenAnswer }>;

/** The min-score policy: each target, then its constrained retry, until a call scores well enough. */
async function deliverUnderPolicy(targets: Target[], minScore: number, request: ChatRequest, scope: RequestScope, upstreamFor: (t: Target) => Upstream, answerFrom: AnswerFrom): Promise<Delivered> {
  const policy = new ToolCallPolicy(targets, minScore, request.stream === true, (events) => scope.meter?.chargeDiscarded(events, JSON.stringify(request.messages).length));
  for (const step of policy.steps) {
    await policy.beforeStep(step);
    let got: Awaited<ReturnType<AnswerFrom>>;
    try {
      // A constrained retry's grammar (built from the tools) would start over on a continuation.
      const upstream = step.constrained ? (t: Target) => adapterOf(t).constrained!(t) : upstreamFor;
      got = await answerFrom([step.target], upstream, !step.constrained);
    } catch (e) {
      policy.failed(step, e);
      continue;
    }
    // The attempt carries its start along: the policy keeps every field when it buffers events.
    const outcome = await policy.consider(step, { target: step.target, ...got.answer, started: got.started } as RewrittenAttempt);
    if (outcome) return deliveredOf(outcome);
  }
  return deliveredOf(policy.end());
}

/** What the caller reports beside the events (`x_switchyard`): the answer delivered so far, if any. */
function extensionOf(d: Delivered | undefined, minScore: number): SwitchyardExtension {
  const scores = d?.answer.reports() ?? [];
  const continuing = d?.started.continuing;
  return {
    target: continuing?.current ?? d?.started.target.name ?? "",
    attempts: (d?.attempts ?? 0) + (continuing?.extraAttempts ?? 0),
    ...(continuing?.resumes.length ? { resumes: continuing.resumes } : {}),
    ...(d ? { timings: { first_event_ms: d.started.firstEventAt - d.started.startedAt, total_ms: Date.now() - d.started.startedAt } } : {}),
    ...(scores.length ? { tool_calls: scores.map(({ index, id, score, problems }: ToolCallReport) => ({ index, id, score, problems })) } : {}),
    ...(d?.belowMinScore || (minScore > 0 && scores.some((r) => r.score < minScore)) ? { policy: "below_min_score" } : {}),
  };
}

/** The policy's outcome as the answer delivered: the attempt behind its events. */
function deliveredOf(outcome: PolicyOutcome): Delivered {
  const attempt = outcome.attempt as RewrittenAttempt & { started: Delivered["started"] };
  return { started: attempt.started, answer: attempt, attempts: outcome.attempts, belowMinScore: outcome.belowMinScore };
}
