import type { Context } from "hono";
import { meterRun } from "../auth/meter.ts";
import type { AppEnv } from "../app-env.ts";
import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ChatRun } from "../routing/start-chat.ts";
import { planTargets } from "../routing/plan-targets.ts";
import { runAttempts, type Started } from "../routing/run-attempts.ts";
import type { Target } from "../routing/target.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { StreamStart } from "../stream/sse-response.ts";
import type { SwitchyardExtension } from "../stream/switchyard-extension.ts";
import type { Upstream } from "../upstreams/upstream.ts";

/**
 * `startChat` for endpoints whose upstream request is not a chat request (text completions): the
 * same plan, attempts, failover, timeouts and abort, with the caller's upstream for each target.
 */
export function startRun(c: Context<AppEnv>, config: Config, model: string, upstreamFor: (target: Target) => Upstream, prompt?: () => unknown): ChatRun {
  c.get("meter")?.checkModel(model);
  const targets = planTargets(config, model);
  const requestId = c.get("requestId");
  const work = new AbortController();
  const abort = () => work.abort();
  c.req.raw.signal?.addEventListener?.("abort", abort, { once: true });

  let started: Started | undefined;
  const extension = (): SwitchyardExtension => ({
    target: started?.target.name ?? "",
    attempts: started?.attempts ?? 0,
    ...(started ? { timings: { first_event_ms: started.firstEventAt - started.startedAt, total_ms: Date.now() - started.startedAt } } : {}),
  });
  // The upstreams made by `upstreamFor` carry their own request; this one only names the model.
  const request: ChatRequest = { model, messages: [] };
  const start: Promise<StreamStart> = meterRun(c, model, prompt ?? (() => ""), () => runAttempts(targets, { request, requestId, config, env: c.env as unknown as Record<string, unknown>, signal: work.signal, upstreamFor }).then((s) => {
    started = s;
    return { first: s.first, events: s.events, headers: { "x-switchyard-target": s.target.name, "x-switchyard-attempts": String(s.attempts) } };
  }));
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

/** An upstream for a target that cannot serve this endpoint: skipped like a busy one (no_capacity). */
export function unableUpstream(target: Target, endpoint: string): Upstream {
  return {
    name: target.name,
    open: () =>
      Promise.reject(
        new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: `${target.name} cannot serve ${endpoint}, and no other target for this model could.` }),
      ),
  };
}
