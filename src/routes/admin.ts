// The admin API for team keys: create, list, change and revoke them, and read every key's usage.
import type { Context } from "hono";
import * as z from "zod/mini";
import type { AppEnv } from "../auth/app-env.ts";
import { forgetCached, keyGate, keyStore } from "../auth/key-directory.ts";
import { generateKey, generateKeyId, hashKey } from "../auth/key-format.ts";
import type { KeyRecord, UsageRow } from "../auth/key-record.ts";
import { requireAdmin } from "../auth/principal.ts";
import { resolveServes } from "../auth/resolve-serves.ts";
import { SCOPES } from "../auth/scopes.ts";
import { BrowserPolicySchema } from "../config/config-schema.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { parseBody } from "../schemas/parse-body.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { KEY_PRIORITY_MAX } from "../auth/key-record.ts";

const positive = z.int().check(z.positive());
/** A key's level in the admission queue (docs/configuration.md, "queue"): higher first, 0 by default. */
const serviceTier = z.enum(["flex", "default", "priority"]);
const priority = z.int().check(z.gte(-KEY_PRIORITY_MAX), z.lte(KEY_PRIORITY_MAX));

const CreateKeySchema = z.strictObject({
  name: z.string().check(z.minLength(1), z.maxLength(100)),
  scopes: z.array(z.enum(SCOPES)).check(z.minLength(1)),
  models: z.optional(z.nullable(z.array(z.string().check(z.minLength(1))).check(z.minLength(1)))),
  limits: z.optional(
    z.strictObject({ rpm: z.optional(positive), concurrency: z.optional(positive), tokensPerDay: z.optional(positive), defaultMaxTokens: z.optional(positive) }),
  ),
  /** May its requests be served by a browser session? null or absent: the deployment's browser.default. */
  browser: z.optional(z.nullable(BrowserPolicySchema)),
  /** A serve key: the keys (ids or names) whose requests its sessions take; null or absent: everyone's. */
  serves: z.optional(z.nullable(z.array(z.string().check(z.minLength(1))).check(z.minLength(1)))),
  /** When its requests wait for a slot: higher levels are served first. Default 0. */
  priority: z.optional(priority),
  /** The request log captures its requests' bodies and answers (while the log is on; docs/security.md). Default false. */
  capture: z.optional(z.boolean()),
  /** The highest service_tier its requests are served at (docs/api.md, "Service tiers"). Default "default". */
  maxServiceTier: z.optional(serviceTier),
});

const UpdateKeySchema = z.strictObject({
  browser: z.optional(z.nullable(BrowserPolicySchema)),
  serves: z.optional(z.nullable(z.array(z.string().check(z.minLength(1))).check(z.minLength(1)))),
  /** null: back to 0. */
  priority: z.optional(z.nullable(priority)),
  capture: z.optional(z.boolean()),
  maxServiceTier: z.optional(z.nullable(serviceTier)),
});

function servesNeedsServeScope(scopes: readonly string[]): ProxyError {
  return new ProxyError({
    status: 400,
    code: "invalid_value",
    param: "serves",
    message: `serves restricts whose requests a serve key's browser sessions take, and this key has no serve scope (it has: ${scopes.join(", ")}).`,
  });
}

/** `POST /v1/admin/keys`: a new key, shown once in this answer and stored only as its hash. */
export async function createKey(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const body = await readJsonBody(c.req.raw, 64 * 1024);
  const input = parseBody(CreateKeySchema, body, {
    subject: "key",
    send: 'Send {name, scopes: ["chat"|"serve"|"admin"...], models?, limits?: {rpm?, concurrency?, tokensPerDay?, defaultMaxTokens?}, browser?: "allow"|"deny", serves?: [key ids or names], priority?: integer, capture?: boolean, maxServiceTier?: "flex"|"default"|"priority"}.',
  });
  const scopes = [...new Set(input.scopes)];
  if (input.serves && !scopes.includes("serve")) throw servesNeedsServeScope(scopes);
  const store = keyStore(c.env);
  const serves = input.serves ? resolveServes(input.serves, await store.list()) : null;
  const key = generateKey();
  const record: KeyRecord = {
    id: generateKeyId(),
    name: input.name,
    scopes,
    models: input.models ? [...new Set(input.models)] : null,
    limits: input.limits ?? {},
    browser: input.browser ?? null,
    serves,
    priority: input.priority ?? 0,
    capture: input.capture ?? false,
    maxServiceTier: input.maxServiceTier ?? "default",
    createdAt: Date.now(),
    revokedAt: null,
  };
  await store.create(record, await hashKey(key));
  forgetCached(c.env);
  return c.json({ ...publicRecord(record), key }, 201, { "cache-control": "no-store" });
}

/** `GET /v1/admin/keys`: every key, revoked ones included; never a secret. */
export async function listKeys(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const keys = await keyStore(c.env).list();
  return c.json({ object: "list", data: keys.map(publicRecord) });
}

/**
 * `PATCH /v1/admin/keys/:id`: changes a key's data policy, `browser` and `serves`, its queue
 * `priority` (null: back to the default) and its `capture`. Applies at once in this isolate and to the key's live browser sessions, and within the
 * key cache's 5 s in other isolates.
 */
export async function updateKey(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const id = c.req.param("id") ?? "";
  const input = parseBody(UpdateKeySchema, await readJsonBody(c.req.raw, 64 * 1024), {
    subject: "key change",
    send: 'Send {browser?: "allow"|"deny"|null, serves?: [key ids or names]|null, priority?: integer|null, capture?: boolean, maxServiceTier?: "flex"|"default"|"priority"|null}.',
  });
  const store = keyStore(c.env);
  const notFound = () => new ProxyError({ status: 404, code: "key_not_found", param: "id", message: `No key with id "${id}". GET /v1/admin/keys lists them.` });
  const current = await store.get(id);
  if (!current) throw notFound();
  if (current.revokedAt !== null) throw new ProxyError({ status: 400, code: "invalid_value", param: "id", message: `The key "${current.name}" was revoked; a revoked key cannot be changed.` });
  if (input.serves && !current.scopes.includes("serve")) throw servesNeedsServeScope(current.scopes);
  const change = {
    ...(input.browser !== undefined ? { browser: input.browser } : {}),
    ...(input.serves !== undefined ? { serves: input.serves ? resolveServes(input.serves, await store.list()) : null } : {}),
    ...(input.priority !== undefined ? { priority: input.priority } : {}),
    ...(input.capture !== undefined ? { capture: input.capture } : {}),
    ...(input.maxServiceTier !== undefined ? { maxServiceTier: input.maxServiceTier } : {}),
  };
  const updated = await store.update(id, change);
  if (!updated) throw notFound();
  forgetCached(c.env, updated.hash);
  // Sessions this key connected take only the requests it now lists, from the next one on.
  if ("serves" in change && current.scopes.includes("serve")) await sessionHub(c.env).regrant(id, updated.record.serves);
  return c.json(publicRecord(updated.record));
}

/** `DELETE /v1/admin/keys/:id` (or `POST …/revoke`): refused from the next request on; a serve key's sessions are closed. */
export async function revokeKey(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const id = c.req.param("id") ?? "";
  const revoked = await keyStore(c.env).revoke(id, Date.now());
  if (!revoked) throw new ProxyError({ status: 404, code: "key_not_found", param: "id", message: `No key with id "${id}". GET /v1/admin/keys lists them.` });
  await keyGate(c.env, id).revoke();
  forgetCached(c.env, revoked.hash);
  if (revoked.record.scopes.includes("serve")) await sessionHub(c.env).closeSessionsOf(id);
  return c.json(publicRecord(revoked.record));
}

/** `GET /v1/admin/usage[?key=id][&since=YYYY-MM-DD]`: usage of every key (or one), per day, model and backend. */
export async function adminUsage(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const only = keyParam(c.req.queries("key"));
  const since = sinceDay(c.req.queries("since"));
  const keys = (await keyStore(c.env).list()).filter((k) => !only || k.id === only);
  if (only && keys.length === 0) throw new ProxyError({ status: 404, code: "key_not_found", param: "key", message: `No key with id "${only}".` });
  const data = await Promise.all(keys.map(async (k) => ({ key: publicRecord(k), ...summarize(await keyGate(c.env, k.id).usage(since)) })));
  return c.json({ object: "list", since: since ?? null, data });
}

/** `?key=`: absent, or one key id. */
function keyParam(values: string[] | undefined): string | undefined {
  if (values === undefined) return undefined;
  if (values.length > 1 || values[0] === "") {
    throw new ProxyError({ status: 400, code: "invalid_value", param: "key", message: "key must be one key id (GET /v1/admin/keys lists them), or left out for every key." });
  }
  return values[0];
}

/** `?since=`: absent, or once, a real calendar day YYYY-MM-DD (UTC); anything else is a 400 naming it. */
export function sinceDay(values: string[] | undefined): string | undefined {
  if (values === undefined) return undefined;
  const value = values[0]!;
  if (values.length > 1 || !isCalendarDay(value)) {
    throw new ProxyError({
      status: 400,
      code: "invalid_value",
      param: "since",
      message: `since must be one day, YYYY-MM-DD (UTC), e.g. ${new Date().toISOString().slice(0, 10)}; got ${values.length > 1 ? `${values.length} values` : JSON.stringify(value.slice(0, 40))}.`,
    });
  }
  return value;
}

function isCalendarDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
}

/**
 * Where a request was served, from its backend (the target's name, as `x-switchyard-target` says
 * it): a llama-server, a browser session, or nothing (refused or failed before any target answered).
 */
export function backendKind(backend: string): "llama" | "browser" | "none" {
  // A batch line's row is its backend's, marked (src/auth/meter.ts).
  const served = backend.startsWith(BATCH_PREFIX) ? backend.slice(BATCH_PREFIX.length) : backend;
  if (served.startsWith("llama:")) return "llama";
  if (served.startsWith("browser:")) return "browser";
  return "none";
}

/** How a batch line's usage row names its backend: `batch:<backend>`. */
const BATCH_PREFIX = "batch:";

type Counts = { requests: number; prompt_tokens: number; completion_tokens: number; errors: number };

function add(into: Counts, r: UsageRow): void {
  into.requests += r.requests;
  into.prompt_tokens += r.promptTokens;
  into.completion_tokens += r.completionTokens;
  into.errors += r.errors;
}

/** Rows per day, model and backend (each with its kind), totals, and totals per backend: where the key's requests were served. */
export function summarize(rows: UsageRow[]) {
  const totals: Counts = { requests: 0, prompt_tokens: 0, completion_tokens: 0, errors: 0 };
  const perBackend = new Map<string, Counts>();
  for (const r of rows) {
    add(totals, r);
    let b = perBackend.get(r.backend);
    if (!b) perBackend.set(r.backend, (b = { requests: 0, prompt_tokens: 0, completion_tokens: 0, errors: 0 }));
    add(b, r);
  }
  return {
    totals,
    by_backend: [...perBackend].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([backend, counts]) => ({ backend, kind: backendKind(backend), ...counts })),
    usage: rows.map((r) => ({
      day: r.day,
      model: r.model,
      backend: r.backend,
      kind: backendKind(r.backend),
      batch: r.backend.startsWith(BATCH_PREFIX),
      requests: r.requests,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      errors: r.errors,
    })),
  };
}

export function publicRecord(k: KeyRecord) {
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    models: k.models,
    limits: k.limits,
    browser: k.browser,
    serves: k.serves,
    priority: k.priority,
    capture: k.capture,
    maxServiceTier: k.maxServiceTier,
    created_at: new Date(k.createdAt).toISOString(),
    revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
  };
}
