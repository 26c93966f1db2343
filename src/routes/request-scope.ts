// The routing layer's view of a Hono request (src/routing/request-scope.ts): its id, key, meter,
// signal and waitUntil, taken from the context the middleware filled.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { parseJsonText, readBodyText } from "../http/read-json-body.ts";
import type { RequestScope } from "../routing/request-scope.ts";
import { batchLineOf } from "../auth/batch-line.ts";
import { askedTier, servedTier, type ServiceTier } from "../auth/service-tier.ts";
import { ProxyError } from "../errors/proxy-error.ts";

/** A body's `service_tier` as a tier (400 for a value no API defines). */
export function bodyTier(body: { service_tier?: unknown }): ServiceTier {
  const tier = askedTier(body.service_tier);
  if (tier) return tier;
  throw new ProxyError({ status: 400, code: "invalid_value", param: "service_tier", message: `service_tier ${JSON.stringify(body.service_tier)} is not one of "auto", "default", "flex", "priority" (docs/api.md, "Service tiers").` });
}

/** The tier an answer reports in its `service_tier`: the one that served it (a batch line: "default"). */
export function reportedTier(scope: RequestScope): ServiceTier {
  return scope.serviceClass === undefined || scope.serviceClass === "batch" ? "default" : scope.serviceClass;
}

/**
 * The routing scope of a request. `tier`: the `service_tier` its body asked for (chat, Responses,
 * Messages): served at most at its key's `maxServiceTier` (scope.serviceClass); a batch line is in
 * the batch class whatever it asks.
 */
export function requestScope(c: Context<AppEnv>, tier?: ServiceTier): RequestScope {
  const trace = c.get("trace");
  const facts = c.get("facts");
  const serviceClass = batchLineOf(c.env) ? "batch" : servedTier(tier ?? "default", c.get("principal")?.maxServiceTier ?? "default");
  return {
    serviceClass,
    ...(trace ? { trace } : {}),
    ...(facts ? { facts } : {}),
    requestId: c.get("requestId"),
    ...(c.get("clientRequestId") !== undefined ? { clientRequestId: c.get("clientRequestId") } : {}),
    env: c.env,
    key: c.get("principal"),
    meter: c.get("meter"),
    signal: c.req.raw.signal,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  };
}

/**
 * A generating endpoint's JSON body (at most `maxBytes`), its model and stream flag told to the
 * request log before the body is validated: a request refused as invalid is logged with them. A key
 * with `capture` turns capture on here, the first point where both its key and its body are known.
 */
export async function readRequestBody(c: Context<AppEnv>, maxBytes: number): Promise<unknown> {
  const text = await readBodyText(c.req.raw, maxBytes);
  const facts = c.get("facts");
  const keyCaptures = facts?.keyCapturable === true && c.get("principal")?.capture === true;
  let body: unknown;
  try {
    body = parseJsonText(text);
  } catch (e) {
    // Not JSON: kept as the text it was (redaction then finds a secret only as it is written); it asked for no stream.
    facts?.sent(undefined);
    if (keyCaptures) facts?.captureKeyed(text);
    throw e;
  }
  facts?.sent(body);
  // Written again as JSON, so each secret in it is spelled one way for redaction (a client's encoder may write `\/` or `\u…`).
  if (keyCaptures) facts?.captureKeyed(JSON.stringify(body));
  return body;
}
