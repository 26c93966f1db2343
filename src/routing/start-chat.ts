import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { StreamStart } from "../stream/sse-response.ts";
import type { SwitchyardExtension, ToolCallScore } from "../stream/switchyard-extension.ts";
import { BrowserUpstream } from "../upstreams/browser/browser-upstream.ts";
import { LlamaUpstream } from "../upstreams/llama/llama-upstream.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import { planTargets } from "./plan-targets.ts";
import { runAttempts, type Started } from "./run-attempts.ts";
import type { Target } from "./target.ts";

/** What every API surface (chat, responses, messages…) needs to answer from the event stream. */
export interface ChatRun {
  start: Promise<StreamStart>;
  /** `x_switchyard` for the final chunk or body. */
  extension(scores?: ToolCallScore[]): SwitchyardExtension;
  /** Options shared by sseResponse and jsonResponse. */
  common: {
    start: Promise<StreamStart>;
    headers: Headers;
    commitMs: number;
    heartbeatMs: number;
    abort(): void;
    waitUntil(p: Promise<unknown>): void;
  };
}

/**
 * Plans the targets for a validated chat request and starts trying them; the caller encodes the
 * resulting events in its own wire format. Throws model_not_found before anything starts.
 */
export function startChat(c: Context<AppEnv>, config: Config, request: ChatRequest): ChatRun {
  const targets = planTargets(config, request.model);
  const requestId = c.get("requestId");

  // One controller for everything this request started upstream: the client leaving (noticed by a
  // failed write, or the request signal where the runtime delivers it) aborts it.
  const work = new AbortController();
  const abort = () => work.abort();
  c.req.raw.signal?.addEventListener?.("abort", abort, { once: true });

  let started: Started | undefined;
  const extension = (scores?: ToolCallScore[]): SwitchyardExtension => ({
    target: started?.target.name ?? "",
    attempts: started?.attempts ?? 0,
    ...(started ? { timings: { first_event_ms: started.firstEventAt - started.startedAt, total_ms: Date.now() - started.startedAt } } : {}),
    ...(scores?.length ? { tool_calls: scores.map((s) => ({ ...s, id: "" })) } : {}),
  });

  const start: Promise<StreamStart> = runAttempts(targets, {
    request,
    requestId,
    config,
    env: c.env as unknown as Record<string, unknown>,
    signal: work.signal,
    upstreamFor,
  }).then((s) => {
    started = s;
    return { first: s.first, events: s.events, headers: { "x-switchyard-target": s.target.name, "x-switchyard-attempts": String(s.attempts) } };
  });

  return {
    start,
    extension,
    common: {
      start,
      headers: new Headers({ "x-request-id": requestId }),
      commitMs: config.timeouts.commitMs,
      heartbeatMs: config.timeouts.heartbeatMs,
      abort,
      waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
    },
  };
}

export function upstreamFor(target: Target): Upstream {
  if (target.kind === "llama") return new LlamaUpstream(target.name, target);
  return new BrowserUpstream(target.name, target);
}
