// Whose stored responses a request may see, and the ResponseStore instance that keeps them.
import type { Context } from "hono";
import type { AppEnv } from "../../auth/app-env.ts";
import { presentedCredential } from "../../auth/credential.ts";

/**
 * Whose stored responses a request may see: its team key's, or where the deployment serves without
 * keys (dev, OPEN_MODE), those of the credential it presented (hashed, never kept as sent), else the
 * shared "anonymous" owner. Each owner is its own ResponseStore instance, so another owner's ids do
 * not exist for it.
 */
export async function responseOwner(c: Context<AppEnv>): Promise<string> {
  const key = c.get("principal");
  if (key) return `key:${key.id}`;
  const credential = presentedCredential(c.req.raw.headers);
  if (credential === null) return "anonymous";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(credential)));
  return `credential:${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export function responseStore(env: Env, owner: string): DurableObjectStub<import("./response-store.ts").ResponseStore> {
  return env.RESPONSE_STORE.get(env.RESPONSE_STORE.idFromName(owner));
}
