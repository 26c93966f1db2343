// One Responses WebSocket's place among its key's: a lease from the key's KeyGate, taken when it
// opens (refused past limits.maxSocketsPerKey), renewed while it is open and on every message (a
// revoked key's sockets close then), released when it closes.
import { readCredential } from "../auth/credential.ts";
import { keyGate, lookupKey } from "../auth/key-directory.ts";
import { SOCKET_RENEW_MS } from "../auth/key-gate.ts";
import type { KeyRecord } from "../auth/key-record.ts";
import { ProxyError } from "../errors/proxy-error.ts";

/** Why a key's socket is closed by the key: the error event sent first, then the close code and reason (docs/api.md). */
export interface KeyLoss {
  code: 4401 | 4403;
  reason: string;
  status: 401 | 403;
  error: string;
  message: string;
}

export const KEY_REVOKED: KeyLoss = {
  code: 4401,
  reason: "invalid_api_key: the key was revoked",
  status: 401,
  error: "invalid_api_key",
  message: "This API key was revoked. Ask your admin for a new one.",
};
const SCOPE_LOST: KeyLoss = {
  code: 4403,
  reason: "insufficient_scope: the key lost the chat scope",
  status: 403,
  error: "insufficient_scope",
  message: "This API key no longer has the chat scope. Ask your admin for a key with chat.",
};

export class SocketLease {
  private timer: ReturnType<typeof setInterval> | undefined;
  private released = false;

  private constructor(
    private readonly env: Env,
    private readonly key: KeyRecord,
    private readonly headers: Headers,
    private readonly leaseId: string,
  ) {}

  /** Takes a lease for a new socket of `key`, or throws the refusal (429 too_many_sockets, 401 revoked). */
  static async take(env: Env, key: KeyRecord, headers: Headers, max: number): Promise<SocketLease> {
    const lease = await keyGate(env, key.id).openSocket(max);
    if (!lease.ok) {
      if (lease.code === "invalid_api_key") throw new ProxyError({ status: 401, code: "invalid_api_key", message: "This API key was revoked. Ask your admin for a new one." });
      throw new ProxyError({ status: 429, code: "too_many_sockets", retryAfter: Math.ceil(SOCKET_RENEW_MS / 1000), message: lease.message });
    }
    return new SocketLease(env, key, headers, lease.leaseId);
  }

  /**
   * The key as it is now: null while it still may use the socket, or why not. Its KeyGate says at
   * once whether it was revoked (and renews the lease); its scopes are read as a request's are.
   */
  async check(): Promise<KeyLoss | null> {
    if (!(await keyGate(this.env, this.key.id).renewSocket(this.leaseId))) return KEY_REVOKED;
    const credential = readCredential(this.headers);
    const record = credential.kind === "key" ? await lookupKey(this.env, credential.value) : null;
    if (!record || record.revokedAt !== null) return KEY_REVOKED;
    return record.scopes.includes("chat") ? null : SCOPE_LOST;
  }

  /** Checks the key every SOCKET_RENEW_MS while the socket is open (idle or not); `lost` once it may not. */
  watch(lost: (why: KeyLoss) => void): void {
    this.timer = setInterval(() => {
      this.check().then(
        (why) => why && lost(why),
        () => {}, // a failed renewal is tried again at the next tick; the lease outlives two of them
      );
    }, SOCKET_RENEW_MS);
  }

  /** The socket closed: its lease is given back (`waitUntil` keeps the call alive past the socket). */
  release(waitUntil: (p: Promise<unknown>) => void): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    // An unreleased lease expires on its own (SOCKET_LEASE_TTL_MS).
    waitUntil(Promise.resolve(keyGate(this.env, this.key.id).closeSocket(this.leaseId)).catch(() => {}));
  }
}
