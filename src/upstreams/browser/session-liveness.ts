// When a browser session that stopped pinging counts as dead, and the close it gets.
import { PING_INTERVAL_MS } from "../../schemas/relay.ts";

/** How long a session may stay silent: two ping intervals and a second of slack for a late timer. */
export const SILENCE_LIMIT_MS = 2 * PING_INTERVAL_MS + 1000;
/** The close a silent session gets (docs/relay-protocol.md §5). */
export const SILENT_CLOSE = { code: 1001, reason: `no ping for ${SILENCE_LIMIT_MS / 1000} s` } as const;

/**
 * Pure: when a session counts as dead — `SILENCE_LIMIT_MS` after its last sign of life, which is the
 * later of its connection and its last ping (the runtime's auto-response stamp, or a ping the hub
 * answered itself).
 */
export function silentDeadline(connectedAt: number, ...pings: Array<number | undefined>): number {
  return Math.max(connectedAt, ...pings.map((t) => t ?? 0)) + SILENCE_LIMIT_MS;
}
