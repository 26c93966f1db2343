// How authentication reaches the key Durable Objects (KeyStore, KeyGate, AuthGuard): their
// instance names, and per-isolate caches so a known key or a blocked address costs no call.
import type { AuthGuard } from "./auth-guard.ts";
import type { KeyGate } from "./key-gate.ts";
import type { KeyStore } from "./key-store.ts";
import { durableNamespace } from "../config/env-vars.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { hashKey } from "./key-format.ts";
import type { KeyRecord } from "./key-record.ts";

// Per-isolate caches in front of the KeyStore, so a request with a known key costs no Durable Object
// call. A positive lookup and the active-key count are kept for CACHE_MS; revocation clears the entry
// in the revoking isolate at once, and every key with limits is also refused by its KeyGate at once.
export const CACHE_MS = 5_000;

interface Cached<T> {
  value: T;
  at: number;
}

const records = new Map<string, Cached<KeyRecord>>();
const activeCounts = new Map<string, Cached<number>>();
const blocked = new Map<string, number>();

/** The KeyStore instance: "keys", or KEY_STORE_NAME (tests give each case a store of its own). */
export function storeName(env: Env): string {
  return typeof env.KEY_STORE_NAME === "string" && env.KEY_STORE_NAME ? env.KEY_STORE_NAME : "keys";
}

export function keyStore(env: Env): DurableObjectStub<KeyStore> {
  return durableNamespace<KeyStore>(env, "KEY_STORE").getByName(storeName(env));
}

export function keyGate(env: Env, keyId: string): DurableObjectStub<KeyGate> {
  return durableNamespace<KeyGate>(env, "KEY_GATE").getByName(`${storeName(env)}:${keyId}`);
}

export function authGuard(env: Env, address: string): DurableObjectStub<AuthGuard> {
  return durableNamespace<AuthGuard>(env, "AUTH_GUARD").getByName(`${storeName(env)}:${address}`);
}

/** How many unrevoked keys exist (0 decides open or locked mode). */
export async function activeKeys(env: Env): Promise<number> {
  const name = storeName(env);
  const hit = activeCounts.get(name);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
  const value = await keyStore(env).activeKeys();
  activeCounts.set(name, { value, at: Date.now() });
  return value;
}

/** The record of a presented key, or null (unknown). Revoked records are returned; the caller refuses them. */
export async function lookupKey(env: Env, key: string): Promise<KeyRecord | null> {
  const hash = await hashKey(key);
  const cacheKey = `${storeName(env)}\u0000${hash}`;
  const hit = records.get(cacheKey);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
  const { record, activeKeys: n } = await keyStore(env).lookup(hash);
  activeCounts.set(storeName(env), { value: n, at: Date.now() });
  if (record && record.revokedAt === null) records.set(cacheKey, { value: record, at: Date.now() });
  else records.delete(cacheKey);
  return record;
}

/** After create or revoke in this isolate: forget what is cached, so the change applies here at once. */
export function forgetCached(env: Env, hash?: string): void {
  activeCounts.delete(storeName(env));
  if (hash) records.delete(`${storeName(env)}\u0000${hash}`);
}

/** Seconds an address is still blocked for, as far as this isolate knows (0: not blocked). */
export function blockedFor(env: Env, address: string): number {
  const until = blocked.get(`${storeName(env)}:${address}`);
  if (until === undefined) return 0;
  const left = until - Date.now();
  if (left <= 0) {
    blocked.delete(`${storeName(env)}:${address}`);
    return 0;
  }
  return Math.ceil(left / 1000);
}

/** Counts a failed authentication from `address`; returns seconds blocked (0: not yet). */
export async function recordFailure(env: Env, address: string): Promise<number> {
  const { blockedForS } = await authGuard(env, address).fail();
  if (blockedForS > 0) blocked.set(`${storeName(env)}:${address}`, Date.now() + blockedForS * 1000);
  return blockedForS;
}

export function tooManyFailures(retryAfter: number): ProxyError {
  return new ProxyError({
    status: 429,
    code: "too_many_failed_authentications",
    retryAfter,
    message: `Too many failed authentications from this address; try again in ${retryAfter} s.`,
  });
}
