import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { planTargets } from "../routing/plan-targets.ts";
import { EmbeddingsRequestSchema } from "../schemas/embeddings-request.ts";
import { fetchBrowserEmbeddings } from "../upstreams/browser/browser-embeddings.ts";
import { BrowserUnableError } from "../upstreams/browser/browser-upstream.ts";
import { fetchLlamaEmbeddings } from "../upstreams/llama/llama-embeddings.ts";

/**
 * `POST /v1/embeddings`: passed through to the model's targets in order, failing over on retryable
 * errors. Browser targets are tried when a session serves the model as a web-llm embedding model;
 * otherwise they are skipped (no_capacity) without counting an attempt. The requested model name is echoed.
 */
export async function embeddings(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateBody(EmbeddingsRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
  const targets = planTargets(config, request.model);
  const requestId = c.get("requestId");
  const signal = c.req.raw.signal ?? new AbortController().signal;
  let last: ProxyError | undefined;
  let attempts = 0;
  for (const target of targets) {
    const ctx = { requestId, signal, responseStartMs: config.timeouts.responseStartMs, env: c.env as unknown as Record<string, unknown> };
    try {
      let body: Record<string, unknown>;
      if (target.kind === "llama") {
        attempts++;
        body = await fetchLlamaEmbeddings(target, target.name, { ...request }, ctx, config.timeouts.totalMs);
      } else {
        attempts++;
        try {
          body = await fetchBrowserEmbeddings(target, target.name, { ...request }, ctx, config.timeouts.totalMs);
        } catch (e) {
          if (!(e instanceof BrowserUnableError)) throw e;
          // Skipped, not tried (no session has an embedding model for it): not counted, and it never
          // masks why a server before it failed.
          attempts--;
          last ??= new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: `${target.name} cannot serve embeddings (no browser session serves ${target.model} as an embedding model), and no other target for this model could.` });
          continue;
        }
      }
      const headers = { "x-switchyard-target": target.name, "x-switchyard-attempts": String(attempts) };
      return c.json({ ...body, model: request.model, x_switchyard: { target: target.name, attempts } }, 200, headers);
    } catch (e) {
      const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} failed: ${String(e)}` });
      if (!err.retryable) {
        err.attempts = attempts;
        throw err;
      }
      last = err;
    }
  }
  const err = last ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." });
  err.attempts = attempts;
  throw err;
}
