// The routing layer's view of a Hono request (src/routing/request-scope.ts): its id, key, meter,
// signal and waitUntil, taken from the context the middleware filled.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import type { RequestScope } from "../routing/request-scope.ts";

export function requestScope(c: Context<AppEnv>): RequestScope {
  return {
    requestId: c.get("requestId"),
    env: c.env,
    key: c.get("principal"),
    meter: c.get("meter"),
    signal: c.req.raw.signal,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  };
}
