// Who is calling and whether they may: API keys, the admin credential and the serve credential
// checked, with open and locked modes, and failed attempts counted against the address.
import type { Context } from "hono";
import type { AppEnv } from "./app-env.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { clientAddress, isTruthy, readCredential } from "./credential.ts";
import { activeKeys, blockedFor, keyStore, lookupKey, recordFailure, tooManyFailures } from "./key-directory.ts";
import { sameSecret } from "./key-format.ts";
import type { KeyRecord } from "./key-record.ts";
import type { Scope } from "./scopes.ts";

/** Who is calling: a team key, or nobody in open mode (dev with no keys, or OPEN_MODE). */
export type Principal = { kind: "key"; key: KeyRecord } | { kind: "open" };

export type AuthMode = "keys" | "open" | "locked";

/** How this deployment authenticates right now: keys exist, open (dev with none, or OPEN_MODE), or locked. */
export async function authMode(env: Env): Promise<AuthMode> {
  if ((await activeKeys(env)) > 0) return "keys";
  return env.SWITCHYARD_ENV === "dev" || isTruthy(env.OPEN_MODE) ? "open" : "locked";
}

const NO_KEYS_FIX =
  "This Switchyard has no API keys yet, so it serves nobody. Create one: set the admin secret (`wrangler secret put ADMIN_TOKEN`), then `SWITCHYARD_URL=<this url> SWITCHYARD_ADMIN_TOKEN=<it> npm run keys -- create --name <you> --scopes chat`; or set the variable OPEN_MODE=1 to serve without keys.";

const NOT_BEARER = "The Authorization header is not a Bearer credential: send Authorization: Bearer <key> (or x-api-key: <key>).";

/**
 * Authenticates an API caller and checks `scope`. With no keys in dev (or with OPEN_MODE) any
 * credential sent is ignored; with OPEN_MODE and keys, a valid key is used and anything else is
 * anonymous; otherwise a missing key is 401, a wrong or revoked one 401 (and counted against the
 * client's address), a key without the scope 403.
 */
export async function authenticate(c: Context<AppEnv>, scope: Scope | null): Promise<Principal> {
  const env = c.env;
  const address = clientAddress(c.req.raw.headers, env);
  const blocked = blockedFor(env, address);
  if (blocked > 0) throw tooManyFailures(blocked);
  const mode = await authMode(env);
  if (mode === "open") return { kind: "open" };
  if (mode === "locked") throw new ProxyError({ status: 403, code: "no_keys_configured", message: NO_KEYS_FIX });

  const credential = readCredential(c.req.raw.headers);
  const openMode = isTruthy(env.OPEN_MODE);
  if (credential.kind === "none") {
    if (openMode) return { kind: "open" };
    throw new ProxyError({
      status: 401,
      code: "missing_api_key",
      message: "This Switchyard needs an API key: send Authorization: Bearer <key> (or x-api-key: <key>). Ask your admin for one.",
    });
  }
  const key = credential.kind === "key" ? await lookupKey(env, credential.value) : null;
  if (!key || key.revokedAt !== null) {
    if (openMode) return { kind: "open" };
    const blockedS = await recordFailure(env, address);
    if (blockedS > 0) throw tooManyFailures(blockedS);
    throw new ProxyError({
      status: 401,
      code: "invalid_api_key",
      message: key
        ? "This API key was revoked. Ask your admin for a new one."
        : credential.kind === "malformed"
          ? NOT_BEARER
          : "The API key is not valid here. Check it, or ask your admin for one.",
    });
  }
  if (scope && !key.scopes.includes(scope)) throw missingScope(key, scope);
  return { kind: "key", key };
}

/**
 * The principal of a batch line: the key that created the batch, read again (a key revoked since, or
 * one that lost the chat scope, runs no more lines); open mode's batches stay open.
 */
export async function batchPrincipal(env: Env, keyId: string | null): Promise<Principal> {
  if (keyId === null) return { kind: "open" };
  const key = await keyStore(env).get(keyId);
  if (!key || key.revokedAt !== null) throw new ProxyError({ status: 401, code: "invalid_api_key", message: "The key that created this batch was revoked: its remaining lines are not run." });
  if (!key.scopes.includes("chat")) throw missingScope(key, "chat");
  return { kind: "key", key };
}

function missingScope(key: KeyRecord, scope: Scope): ProxyError {
  return new ProxyError({
    status: 403,
    code: "insufficient_scope",
    message: `The key "${key.name}" lacks the ${scope} scope (it has: ${key.scopes.join(", ") || "none"}). Ask your admin for a key with ${scope}.`,
  });
}

/**
 * Admin access for `/v1/admin/*` (and /metrics, the status page): the ADMIN_TOKEN secret or a key with
 * the `admin` scope. With neither configured, 403 naming the fix.
 */
export async function requireAdmin(c: Context<AppEnv>): Promise<{ via: "token" } | { via: "key"; key: KeyRecord }> {
  const env = c.env;
  const address = clientAddress(c.req.raw.headers, env);
  const blocked = blockedFor(env, address);
  if (blocked > 0) throw tooManyFailures(blocked);
  const token = typeof env.ADMIN_TOKEN === "string" && env.ADMIN_TOKEN !== "" ? env.ADMIN_TOKEN : null;
  const credential = readCredential(c.req.raw.headers);
  const notConfigured = new ProxyError({
    status: 403,
    code: "admin_not_configured",
    message:
      "Administration needs the ADMIN_TOKEN secret or a key with the admin scope, and this request had neither. Set it with `wrangler secret put ADMIN_TOKEN` (locally: .dev.vars or `npm start`, which generates one), then send Authorization: Bearer <ADMIN_TOKEN>.",
  });
  if (credential.kind === "none") {
    if (!token && (await activeKeys(env)) === 0) throw notConfigured;
    throw new ProxyError({ status: 401, code: "missing_api_key", message: "Administration needs Authorization: Bearer <ADMIN_TOKEN or an admin key>." });
  }
  if (credential.kind === "key" && token && sameSecret(credential.value, token)) return { via: "token" };
  const key = credential.kind === "key" ? await lookupKey(env, credential.value) : null;
  if (key && key.revokedAt === null) {
    if (!key.scopes.includes("admin")) throw missingScope(key, "admin");
    return { via: "key", key };
  }
  const blockedS = await recordFailure(env, address);
  if (blockedS > 0) throw tooManyFailures(blockedS);
  if (!token && (await activeKeys(env)) === 0) throw notConfigured;
  throw new ProxyError({ status: 401, code: "invalid_api_key", message: credential.kind === "malformed" ? NOT_BEARER : "The admin credential is not valid here." });
}

/**
 * The serve credential for browser sessions: a key with the `serve` scope, or the SERVE_TOKEN secret
 * (the documented fallback; `npm start` generates one in dev). Anonymous serving is always refused.
 * Says which it was: a session's grant (whose requests it takes) comes from the key or the config.
 */
export async function requireServe(c: Context<AppEnv>): Promise<{ via: "token" } | { via: "key"; key: KeyRecord }> {
  const env = c.env;
  const address = clientAddress(c.req.raw.headers, env);
  const blocked = blockedFor(env, address);
  if (blocked > 0) throw tooManyFailures(blocked);
  const credential = readCredential(c.req.raw.headers);
  if (credential.kind === "none") {
    throw new ProxyError({
      status: 401,
      code: "missing_credential",
      message: "Serving from a browser needs a serve credential: send Authorization: Bearer <a key with the serve scope, or SERVE_TOKEN>, or connect with a ticket from POST /v1/sessions/ticket.",
    });
  }
  const serveToken = typeof env.SERVE_TOKEN === "string" && env.SERVE_TOKEN !== "" ? env.SERVE_TOKEN : null;
  if (credential.kind === "key" && serveToken && sameSecret(credential.value, serveToken)) return { via: "token" };
  const key = credential.kind === "key" ? await lookupKey(env, credential.value) : null;
  if (key && key.revokedAt === null) {
    if (!key.scopes.includes("serve")) throw missingScope(key, "serve");
    return { via: "key", key };
  }
  const blockedS = await recordFailure(env, address);
  if (blockedS > 0) throw tooManyFailures(blockedS);
  throw new ProxyError({
    status: 403,
    code: "invalid_serve_key",
    message: serveToken
      ? "This credential may not serve: it is neither a key with the serve scope nor the SERVE_TOKEN."
      : "This credential may not serve: it is not a key with the serve scope, and no SERVE_TOKEN is set (`wrangler secret put SERVE_TOKEN`; `npm start` generates one in dev).",
  });
}
