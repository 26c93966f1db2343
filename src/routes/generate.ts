// The one handler of every generating API (chat completions, completions, Responses, compact,
// Messages): the body read (and told to the request log) and checked by the API's door
// (src/api/<surface>/index.ts), its chat run through the pipeline (src/routing/pipeline.ts runChat)
// with the routing layer's view of the request (RequestScope), and the answer encoded by the door, as
// SSE or as one JSON body (src/responders/).
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import type { GeneratingApi } from "../api/door.ts";
import { loadConfig } from "../config/load-config.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { parseJsonText, readBodyText } from "../http/read-json-body.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { sseResponse } from "../responders/sse-response.ts";
import { runChat } from "../routing/pipeline.ts";
import type { RequestScope } from "../routing/request-scope.ts";
import { batchLineOf } from "../auth/batch-line.ts";
import { servedTier, type ServiceTier } from "../auth/service-tier.ts";

/** The route of a generating API: validate → pipeline → encode; a failure in the API's own shape when it has one. */
export function generate<R>(api: GeneratingApi<R>): (c: Context<AppEnv>) => Promise<Response> {
  const refuse = api.refuse;
  if (!refuse) return (c) => answer(api, c);
  return async (c) => {
    try {
      return await answer(api, c);
    } catch (e) {
      return refuse(toProxyError(e), c);
    }
  };
}

async function answer<R>(api: GeneratingApi<R>, c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = api.validate(await readRequestBody(c, config.limits.maxBodyBytes));
  const opening = api.open(request, c);
  const opened = opening instanceof Promise ? await opening : opening;
  const scope = requestScope(c, opened.tier);
  const run = runChat(scope, config, opened.chat, opened.options);
  const out = opened.encode(run, reportedTier(scope));
  return "encoder" in out ? sseResponse({ ...run.common, ...out }) : jsonResponse({ ...run.common, ...out });
}

/** The tier an answer reports in its `service_tier`: the one that served it (a batch line: `default`). */
export function reportedTier(scope: RequestScope): ServiceTier {
  return scope.serviceClass === undefined || scope.serviceClass === "batch" ? "default" : scope.serviceClass;
}

/**
 * The routing layer's view of a Hono request (src/routing/request-scope.ts): its id, key, meter,
 * signal and waitUntil, taken from the context the middleware filled, and its class in the admission
 * line: the `tier` its body asked for (chat, Responses, Messages) served at most at its key's
 * `maxServiceTier`, or the batch class for a batch line whatever it asks (src/auth/batch-line.ts).
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
