import { env } from "cloudflare:workers";
import fc from "fast-check";
import { expect } from "vitest";
import { call, configWith, FIXTURE_URL } from "../workerd/harness.ts";

// Shared by the fuzz suite: the deployment it attacks, the invariant every answer must keep, and
// the generators of hostile input. Runs and seed are fixed for `npm test`; FUZZ_RUNS and FUZZ_SEED
// (bindings set from the shell by vitest.config.ts) make a longer or different run: docs/reliability.md.

const knob = (name: string, fallback: number) => Number((env as unknown as Record<string, string | undefined>)[name] || fallback);
export const RUNS = knob("FUZZ_RUNS", 150);
export const SEED = knob("FUZZ_SEED", 20261201);
export const params = (runs = RUNS) => ({ numRuns: runs, seed: SEED, endOnFailure: true });

/** The secrets of the deployment under test: none may appear in any answer. */
export const SECRETS = {
  ADMIN_TOKEN: "adm-fuzz-3c1f0e7a9b2d4e6f8a0c1e3f5a7b9d1f",
  SERVE_TOKEN: "srv-fuzz-7e5d3c1b9a8f6e4d2c0b1a3f5e7d9c2b",
  UPSTREAM_KEY: "upk-fuzz-0a2b4c6d8e1f3a5b7c9d0e2f4a6b8c1d",
};

/** One model on the fixture upstream (a key-protected llama-server stand-in that always answers). */
export function deployment(extra: Record<string, unknown> = {}) {
  return {
    ...configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/ok`, apiKeySecret: "UPSTREAM_KEY" }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 } }),
    ...SECRETS,
    KEY_STORE_NAME: `fuzz-${crypto.randomUUID()}`,
    ...extra,
  };
}

/**
 * Every code a client can get, as docs/api.md's Errors table lists them (Anthropic-shaped errors
 * carry the same codes). A fuzzed input that draws any other is a finding: an undocumented code.
 */
export const DOCUMENTED_CODES = new Set([
  "invalid_json", "missing_required_parameter", "invalid_type", "invalid_value", "unsupported_parameter", "unsupported_content",
  "embeddings_not_supported", "context_length_exceeded", "upstream_error", "missing_api_key", "invalid_api_key",
  "missing_credential", "no_keys_configured", "admin_not_configured", "insufficient_scope", "model_not_allowed",
  "invalid_serve_key", "invalid_ticket", "key_not_found", "rate_limit_exceeded", "concurrency_limit_exceeded",
  "tokens_per_day_exceeded", "too_many_failed_authentications", "upgrade_required", "model_not_found", "not_found",
  "method_not_allowed", "request_too_large", "previous_response_not_found", "item_not_found",
]);

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** How many requests the suite sent (printed at the end, for the record of a run). */
export const sent = { requests: 0 };

export async function send(path: string, init: RequestInit, vars: Record<string, unknown>): Promise<Answer> {
  sent.requests++;
  const { res, done } = await call(path, init, vars);
  const text = res.status === 101 ? "" : await res.text();
  if (res.status === 101) res.webSocket?.accept();
  // Not awaited: the health report a successful request leaves behind waits for its batch (about a
  // second); the answer is complete without it.
  void done().catch(() => {});
  return { status: res.status, headers: res.headers, text };
}

/**
 * The invariant: never a 5xx; a 4xx is an error envelope (OpenAI's, or Anthropic's on /v1/messages)
 * with a documented code; no secret anywhere in the answer.
 */
export function expectSafe(a: Answer, what: string): void {
  expect(a.status, `${what}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(a.text.includes(secret), `${what}: ${name} in the body`).toBe(false);
    for (const [h, v] of a.headers) expect(v.includes(secret), `${what}: ${name} in header ${h}`).toBe(false);
  }
  if (a.status < 400) return;
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    throw new Error(`${what}: a ${a.status} whose body is not JSON: ${a.text.slice(0, 200)}`);
  }
  const code = body?.error?.code;
  expect(typeof code, `${what}: ${a.text.slice(0, 300)}`).toBe("string");
  expect(DOCUMENTED_CODES.has(code), `${what}: undocumented code ${code}`).toBe(true);
  if (body.type === "error") expect(typeof body.error.type).toBe("string");
  else expect(typeof body.error.message, `${what}: envelope`).toBe("string");
}

/**
 * After the hostile input, a good request is still served. `lockoutAllowed`: the input guessed
 * credentials, so the failed-login guard may hold this (local, shared) address for its minute — its
 * documented answer, not a failure to serve.
 */
export async function expectStillServes(vars: Record<string, unknown>, headers: Record<string, string> = {}, lockoutAllowed = false): Promise<void> {
  const a = await send("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) }, vars);
  if (lockoutAllowed && a.status === 429 && JSON.parse(a.text).error.code === "too_many_failed_authentications") return;
  expect(a.status, a.text.slice(0, 300)).toBe(200);
  expect(JSON.parse(a.text).choices[0].message.content).toBe("ok");
}

// --- generators ---

/** Keys that poison a plain-object lookup or merge. */
export const pollutingKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__");

/** Any JSON value, with polluting keys mixed into objects. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: false }),
    fc.integer(),
    fc.string(),
    fc.string({ unit: "grapheme" }),
    pollutingKey,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), pollutingKey), tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** A valid body with one field (at any depth) replaced by a hostile value, or a polluting key added. */
export function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const paths = pathsOf(valid);
  return fc.tuple(fc.constantFrom(...paths), hostileJson, fc.boolean(), pollutingKey).map(([path, value, addKey, key]) => {
    const copy = structuredClone(valid) as Record<string, unknown>;
    let at: any = copy;
    for (const p of path.slice(0, -1)) at = at[p];
    const last = path.at(-1)!;
    if (addKey && at && typeof at === "object") Object.defineProperty(at, key, { value, enumerable: true, configurable: true, writable: true });
    else at[last] = value;
    return copy;
  });
}

function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (!value || typeof value !== "object") return [prefix];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [...(prefix.length ? [prefix] : []), ...entries.flatMap(([k, v]) => pathsOf(v, [...prefix, k]))];
}

/** Bytes that are not UTF-8, or JSON cut short. */
export const hostileBytes = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
  fc.constantFrom('{"model": "m", "messages": [', '{"model":', "\u0000", "[]", '"just a string"', "1e999", '{"a":1}{"b":2}'),
);

/** A nesting `depth` deep: `[[[…]]]` or `{"a":{"a":…}}` in the value of `field`. */
export function deeplyNested(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}
