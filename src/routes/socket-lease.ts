// One Responses WebSocket's place among its key's: a lease from the key's KeyGate, taken when it
// opens (refused past limits.maxSocketsPerKey), renewed while it is open and on every message (a
// revoked key's sockets close then), released when it closes.
import { keyGate } from "../auth/key-directory.ts";
import { SOCKET_RENEW_MS } from "../auth/key-gate.ts";
import type { KeyRecord } from "../auth/key-record.ts";
import { ProxyError } from "../errors/proxy-error.ts";

/** A revoked key's socket: the error event sent first, then the close code and reason (docs/api.md). */
export const KEY_REVOKED = {
  code: 4401,
  reason: "invalid_api_key: the key was revoked",
  status: 401,
  error: "invalid_api_key",
  message: "This API key was revoked. Ask your admin for a new one.",
} as const;

export class SocketLease {
  private timer: ReturnType<typeof setInterval> | undefined;
  private released = false;

  private constructor(
    private readonly env: Env,
    private readonly key: KeyRecord,
    private readonly leaseId: string,
  ) {}

  /** Takes a lease for a new socket of `key`, or throws the refusal (429 too_many_sockets, 401 revoked). */
  static async take(env: Env, key: KeyRecord, max: number): Promise<SocketLease> {
    const lease = await keyGate(env, key.id).openSocket(max);
    if (!lease.ok) {
      if (lease.code === "invalid_api_key") throw new ProxyError({ status: 401, code: "invalid_api_key", message: "This API key was revoked. Ask your admin for a new one." });
      throw new ProxyError({ status: 429, code: "too_many_sockets", retryAfter: Math.ceil(SOCKET_RENEW_MS / 1000), message: lease.message });
    }
    return new SocketLease(env, key, lease.leaseId);
  }

  /**
   * Whether the key may still use the socket: its KeyGate, which every revocation tells at once,
   * renews the lease unless the key was revoked. (A key's scopes never change; its other settings
   * reach each response as it is dispatched.)
   */
  async check(): Promise<boolean> {
    return keyGate(this.env, this.key.id).renewSocket(this.leaseId);
  }

  /** Checks the key every SOCKET_RENEW_MS while the socket is open (idle or not); `revoked` once it was. */
  watch(revoked: () => void): void {
    this.timer = setInterval(() => {
      this.check().then(
        (ok) => ok || revoked(),
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
