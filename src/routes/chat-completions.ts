import type { Context } from "hono";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { planTargets } from "../routing/plan-targets.ts";
import { runAttempts, type Started } from "../routing/run-attempts.ts";
import type { Target } from "../routing/target.ts";
import { validateChatRequest } from "../schemas/validate-chat-request.ts";
import { ChunkEncoder } from "../stream/chunk-encoder.ts";
import { CompletionAggregator } from "../stream/completion-aggregator.ts";
import { jsonResponse } from "../stream/json-response.ts";
import { randomId } from "../stream/random-id.ts";
import { sseResponse, type StreamStart } from "../stream/sse-response.ts";
import type { SwitchyardExtension, ToolCallScore } from "../stream/switchyard-extension.ts";
import { BrowserUpstream } from "../upstreams/browser/browser-upstream.ts";
import { LlamaUpstream } from "../upstreams/llama/llama-upstream.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import type { AppEnv } from "../app-env.ts";

export async function chatCompletions(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateChatRequest(await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
  const targets = planTargets(config, request.model);
  const requestId = c.get("requestId");

  // One controller for everything this request started upstream: the client leaving (noticed by a
  // failed write, or the request signal where the runtime delivers it) aborts it.
  const work = new AbortController();
  const abort = () => work.abort();
  c.req.raw.signal?.addEventListener?.("abort", abort, { once: true });

  const meta = { id: randomId("chatcmpl-"), created: Math.floor(Date.now() / 1000), model: request.model, includeUsage: request.stream_options?.include_usage === true };
  let started: Started | undefined;
  const extension = (scores: ToolCallScore[] | undefined): SwitchyardExtension => ({
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

  const common = {
    start,
    headers: new Headers({ "x-request-id": requestId }),
    commitMs: config.timeouts.commitMs,
    heartbeatMs: config.timeouts.heartbeatMs,
    abort,
    waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
  };
  if (request.stream) {
    return sseResponse({ ...common, encoder: new ChunkEncoder(meta, extension) });
  }
  const aggregator = new CompletionAggregator();
  return jsonResponse({ ...common, aggregator, result: () => aggregator.result(meta, extension) });
}

function upstreamFor(target: Target): Upstream {
  if (target.kind === "llama") return new LlamaUpstream(target.name, target);
  return new BrowserUpstream(target.name, target);
}
