// POST /v1/embeddings: vectors from the model's targets, with chat's failover but no event stream.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { Deadlines } from "../lib/deadlines.ts";
import { planTargetsFor } from "../routing/plan-targets.ts";
import { tryTargets } from "../routing/try-targets.ts";
import { EmbeddingsRequestSchema } from "../schemas/embeddings-request.ts";
import { adapterOf } from "../upstreams/registry/adapters.ts";
import { TargetUnableError } from "../upstreams/upstream.ts";

/**
 * `POST /v1/embeddings`: passed through to the model's targets with chat's order, retries, failover
 * and health signals (tryTargets); an attempt succeeds with the whole JSON body. Browser targets are
 * tried when a session serves the model as a web-llm embedding model; otherwise they are skipped
 * (no_capacity) without counting an attempt. The requested model name is echoed.
 */
export async function embeddings(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateBody(EmbeddingsRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
  c.get("meter")?.checkModel(request.model);
  // Under the caller's browser policy: a denied request never reaches a session.
  const key = c.get("principal");
  const targets = planTargetsFor(config, request.model, key);
  const requestId = c.get("requestId");
  const env = c.env;
  // Every attempt's timeouts on the request's one timer.
  const deadlines = new Deadlines();
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
      const ctx = { requestId, signal, responseStartMs: config.timeouts.responseStartMs, deadlines, env, ...(key ? { keyId: key.id } : {}) };
      const embed = adapterOf(target).embeddings;
      if (!embed) throw new TargetUnableError({ status: 503, code: "no_capacity", message: `${target.name} cannot serve embeddings, and no other target for this model could.` });
      return embed(target, { ...request }, ctx, config.timeouts.totalMs);
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
  const headers = { "x-switchyard-target": target.name, "x-switchyard-attempts": String(attempts) };
  return c.json({ ...body, model: request.model, x_switchyard: { target: target.name, attempts } }, 200, headers);
}
