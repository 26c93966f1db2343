// Each API route's first handler: authenticates the caller, admits it against its key's limits and
// sets up metering, by the kind the route table declares.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { keyGate } from "../auth/key-directory.ts";
import type { KeyRecord } from "../auth/key-record.ts";
import { Meter } from "../auth/meter.ts";
import { authenticate, batchPrincipal } from "../auth/principal.ts";
import { batchLineOf } from "../auth/batch-line.ts";
import { scopeFor, type RouteKind } from "../auth/scopes.ts";
import type { Config } from "../config/config.ts";
import { checkModelName } from "../config/model-name.ts";

/**
 * Authentication, limits and usage for one API route, by the kind its row in the route table declares
 * (src/app.ts): `authMiddleware(refusal)(kind)` is that route's first handler. Session routes check
 * their own serve credential (a ticket needs none), admin routes call requireAdmin; everything else is
 * authenticated here, admitted by the key's KeyGate when the key has limits (the one awaited Durable
 * Object call; a "generate" route takes a hold, a concurrency slot, in the same call), and metered:
 * generating routes through the pipeline's hook, the others when the route returns. A refusal is
 * answered by `refusal`, in the error shape of the route's API (the app knows its routes).
 */
export function authMiddleware(refusal: (err: ProxyError, c: Context<AppEnv>) => Response): (kind: RouteKind) => MiddlewareHandler<AppEnv> {
  return (kind) => async (c, next) => {
    if (kind === "public" || kind === "serve" || kind === "admin" || c.req.method === "OPTIONS") return next();
    const path = c.req.path;
    try {
      // A configuration error is the operator's to fix and says how: it comes before any refusal of
      // the caller (no keys yet, a missing key).
      const config = loadConfig(c.env);
      // A batch line (run in-process by its batch's Durable Object) is its batch's key, checked again now.
      const mark = batchLineOf(c.env);
      const principal = mark ? await batchPrincipal(c.env, mark.keyId) : await authenticate(c, scopeFor(kind));
      // The one model name read from a path rather than a body (bodies' names: planTargets, Meter.checkModel).
      const modelInPath = (c.req.method === "GET" || c.req.method === "HEAD") && path.startsWith("/v1/models/") ? c.req.param("id") : undefined;
      if (modelInPath !== undefined) checkModelName(modelInPath);
      if (principal.kind === "open") {
        if (kind === "self") throw new ProxyError({ status: 401, code: "missing_api_key", message: "Usage is kept per key: send your key as Authorization: Bearer <key>." });
        return next();
      }
      c.set("principal", principal.key);
      if (kind === "self") return next();
      const meter = await admit(c, config, principal.key, kind);
      c.set("meter", meter);
      if (modelInPath !== undefined) meter.checkModel(modelInPath);
    } catch (e) {
      return refusal(toProxyError(e), c);
    }
    const meter = c.get("meter")!;
    try {
      await next();
    } finally {
      await afterRoute(c, meter, path);
    }
  };
}

async function admit(c: Context<AppEnv>, config: Config, key: KeyRecord, kind: RouteKind): Promise<Meter> {
  const gate = keyGate(c.env, key.id);
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const { defaultMaxTokens } = config.limits;
  const { rpm, concurrency, tokensPerDay } = key.limits;
  const batch = batchLineOf(c.env) !== undefined;
  if (rpm === undefined && concurrency === undefined && tokensPerDay === undefined) return new Meter(key, gate, undefined, waitUntil, defaultMaxTokens, batch);
  // A hold whenever the key counts slots or reserves tokens: the pipeline's hook reserves on it.
  const hold = kind === "generate" && (concurrency !== undefined || tokensPerDay !== undefined);
  const admission = await gate.admit(key.limits, hold);
  if (!admission.ok) {
    if (admission.code === "invalid_api_key") throw new ProxyError({ status: 401, code: "invalid_api_key", message: admission.message });
    throw new ProxyError({ status: 429, code: admission.code, retryAfter: admission.retryAfter, message: admission.message });
  }
  const meter = new Meter(key, gate, admission.leaseId, waitUntil, defaultMaxTokens, batch);
  meter.advance = admission.reserved ?? 0;
  return meter;
}

/** Records routes that started no metered run; filters the model list to the key's allow-list. */
async function afterRoute(c: Context<AppEnv>, meter: Meter, path: string): Promise<void> {
  const res = c.res;
  if (path === "/v1/embeddings" && res.ok) {
    const body = (await res.clone().json().catch(() => null)) as { model?: string; usage?: { prompt_tokens?: number } } | null;
    // The upstream's count replaces the reservation (Meter.reserveInput); without one, the estimate.
    meter.routeEnded(res, { model: body?.model ?? "", ...(body?.usage?.prompt_tokens !== undefined ? { promptTokens: body.usage.prompt_tokens } : {}) });
    return;
  }
  meter.routeEnded(res);
  if (path === "/v1/models" && res.ok && meter.key.models) {
    const body = (await res.json()) as { data: Array<{ id: string }>; first_id?: string | null; last_id?: string | null };
    const allowed = new Set(meter.key.models);
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    const data = body.data.filter((m) => allowed.has(m.id));
    // The Anthropic list shape names its first and last entries: they must be of the filtered list.
    const ends = "first_id" in body ? { first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null } : {};
    c.res = new Response(JSON.stringify({ ...body, data, ...ends }), { status: res.status, headers });
  }
}
