import { createSealer, type Sealer } from "./sealer.ts";

// The deployment's sealing key: 32 random bytes made once and kept in the ResponseStore's "seal-key"
// instance, so every isolate of this deployment (and no other deployment) can open its tokens, and no
// operator step is needed. Isolates keep it for their lifetime: it never changes.
let cached: Promise<Sealer> | null = null;

export function sealerFor(env: Env): Promise<Sealer> {
  if (!cached) {
    const stub = env.RESPONSE_STORE.get(env.RESPONSE_STORE.idFromName("seal-key"));
    cached = stub.sealKey().then((key) => createSealer(new Uint8Array(key)));
    cached.catch(() => (cached = null));
  }
  return cached;
}
