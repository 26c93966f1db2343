// CORS for browser clients on /v1/ routes, when SWITCHYARD_CONFIG turns it on (off by default).
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";

const ALLOW_HEADERS = ["authorization", "x-api-key", "content-type", "anthropic-version", "anthropic-beta", "x-request-id", "x-client-request-id", "openai-organization", "openai-project"];
const EXPOSE_HEADERS = ["x-request-id", "x-client-request-id", "x-switchyard-target", "x-switchyard-attempts", "x-switchyard-outcomes", "x-switchyard-estimate", "x-switchyard-capture", "retry-after"];

/**
 * CORS for browser clients, from SWITCHYARD_CONFIG `cors`. Off by default. Runs before
 * authentication so a preflight (which never carries credentials) is answered; credentials are sent
 * as headers, never cookies, so `Access-Control-Allow-Credentials` stays off.
 */
export function corsMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let settings: { origins: string[]; maxAgeSeconds: number } | null = null;
    try {
      settings = loadConfig(c.env).cors;
    } catch {
      // An invalid configuration is reported by the route itself.
    }
    if (!settings || !c.req.path.startsWith("/v1/")) return next();
    const { origins, maxAgeSeconds } = settings;
    return cors({
      origin: origins.includes("*") ? "*" : (origin) => (origins.includes(origin) ? origin : null),
      allowMethods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
      allowHeaders: ALLOW_HEADERS,
      exposeHeaders: EXPOSE_HEADERS,
      maxAge: maxAgeSeconds,
    })(c, next);
  };
}
