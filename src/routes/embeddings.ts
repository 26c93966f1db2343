// POST /v1/embeddings: vectors from the model's targets, with chat's failover but no event stream.
import { readRequestBody } from "./generate.ts";
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { Deadlines } from "../lib/deadlines.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { planTargetsFor } from "../routing/plan-targets.ts";
import { tryTargets } from "../routing/attempt/try-targets.ts";
import { embeddingInputCount, EmbeddingsRequestSchema, MAX_EMBEDDING_INPUTS } from "../schemas/embeddings-request.ts";
import { adapterOf, capabilitiesOf } from "../upstreams/registry/adapters.ts";
import { TargetUnableError } from "../upstreams/upstream.ts";

/**
 * `POST /v1/embeddings`: passed through to the model's targets with chat's order, retries, failover
 * and health signals (tryTargets); an attempt succeeds with the whole JSON body. Browser targets are
 * tried when a session serves the model as a web-llm embedding model; otherwise they are skipped
 * (no_capacity) without counting an attempt. The requested model name is echoed.
 */
export async function embeddings(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateBody(EmbeddingsRequestSchema, await readRequestBody(c, config.limits.maxBodyBytes));
  if (embeddingInputCount(request.input) > MAX_EMBEDDING_INPUTS) {
    throw new ProxyError({ status: 400, code: "invalid_value", param: "input", message: `At most ${MAX_EMBEDDING_INPUTS} inputs per request; send the rest in another request.` });
  }
  const meter = c.get("meter");
  meter?.checkModel(request.model);
  // The input's tokens reserved from the key's day before any upstream is asked (429 when they do
  // not fit), as a generation reserves its prompt and max_tokens; settled at the upstream's count.
  await meter?.reserveInput(request.input);
  // Under the caller's browser policy: a denied request never reaches a session.
  const key = c.get("principal");
  const targets = planTargetsFor(config, request.model, key);
  const requestId = c.get("requestId");
  const clientRequestId = c.get("clientRequestId");
  const env = c.env;
  // Every attempt's timeouts on the request's one timer.
  const deadlines = new Deadlines();
  const trace = c.get("trace");
  const facts = c.get("facts");
  facts?.asked(request.model, false);
  const tried = await tryTargets(
    targets,
    {
      config,
      env,
      model: request.model,
      signal: c.req.raw.signal ?? new AbortController().signal,
      waitUntil: (p) => c.executionCtx.waitUntil(p),
      skips: (err) => err instanceof TargetUnableError,
    },
    async (target, signal) => {
      const embed = adapterOf(target).embeddings;
      if (!embed) throw new TargetUnableError({ status: 503, code: "no_capacity", message: `${target.name} cannot serve embeddings, and no other target for this model could.` });
      // Each attempt a span of the request's trace, when traces are exported.
      const span = trace?.attemptStarted(target.name, capabilitiesOf(target).server?.url);
      const ctx = { requestId, ...(clientRequestId !== undefined ? { clientRequestId } : {}), signal, responseStartMs: config.timeouts.responseStartMs, deadlines, env, ...(key ? { keyId: key.id } : {}), ...(span ? { traceparent: span.traceparent } : {}) };
      try {
        const body = await embed(target, { ...request }, ctx, config.timeouts.totalMs);
        span?.ended("ok");
        return body;
      } catch (e) {
        span?.ended(e instanceof ProxyError ? e.code : "upstream_error");
        throw e;
      }
    },
  );
  const { target, attempts, value: body } = tried;
  const usage = body.usage as { prompt_tokens?: unknown } | undefined;
  // No firstEventMs: the whole answer comes at once, and it would skew the targets' first-event times.
  tried.health.finish({
    target: target.name,
    code: "ok",
    totalMs: Date.now() - tried.requestStart,
    ...(typeof usage?.prompt_tokens === "number" ? { promptTokens: usage.prompt_tokens } : {}),
  });
  facts?.answered({ ...(typeof usage?.prompt_tokens === "number" ? { promptTokens: usage.prompt_tokens } : {}) }, { target: target.name, attempts });
  const headers = { "x-switchyard-target": target.name, "x-switchyard-attempts": String(attempts) };
  return c.json({ ...body, model: request.model, x_switchyard: { target: target.name, attempts } }, 200, headers);
}
