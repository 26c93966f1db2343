// The sealer a request's tokens are sealed with: the deployment's key, bound to the caller.
import type { Context } from "hono";
import type { AppEnv } from "../../auth/app-env.ts";
import { responseOwner } from "./response-owner.ts";
import { bindSealer, createSealer, type Sealer } from "./sealer.ts";

// The deployment's sealing key: 32 random bytes made once and kept in the ResponseStore's "seal-key"
// instance, so every isolate of this deployment (and no other deployment) can open its tokens, and no
// operator step is needed. Isolates keep it for their lifetime: it never changes.
let cached: Promise<Sealer> | null = null;

/**
 * The sealer for a request's tokens: the deployment's, bound to the caller (its key, or the
 * credential it presented where no key is needed), so key B cannot hand back what key A was given.
 */
export async function callerSealer(c: Context<AppEnv>): Promise<Sealer> {
  const [sealer, owner] = await Promise.all([sealerFor(c.env), responseOwner(c)]);
  return bindSealer(sealer, owner);
}

export function sealerFor(env: Env): Promise<Sealer> {
  if (!cached) {
    const stub = env.RESPONSE_STORE.get(env.RESPONSE_STORE.idFromName("seal-key"));
    cached = stub.sealKey().then((key) => createSealer(new Uint8Array(key)));
    cached.catch(() => (cached = null));
  }
  return cached;
}
