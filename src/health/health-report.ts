// What isolates tell the health hub: the upstreams they use, attempts' results, requests' outcomes
// and where conversations were placed.
import type { FailureKind } from "./classify-failure.ts";

/** One upstream a request could use: the hub samples it while there is traffic. */
export interface UpstreamRef {
  url: string;
  apiKeySecret?: string;
  /**
   * How the hub probes it: llama-server's endpoints (the default), or `models`: an OpenAI-compatible
   * server asked only `GET /v1/models`, never llama.cpp's own endpoints.
   */
  probe?: "llama" | "models";
  /** Extra headers each probe carries (a gateway's own). */
  headers?: Record<string, string>;
}

/** One attempt's result, a passive health signal. */
export interface AttemptSignal {
  url: string;
  ok: boolean;
  kind?: FailureKind;
  /** The upstream's own Retry-After, honoured as a cooldown. */
  retryAfterMs?: number;
}

/** How one request ended, for the operator's metrics. */
export interface RequestOutcome {
  /** Client-facing target name (`llama:host:port`, `browser:model`), or "none". */
  target: string;
  /** "ok" or the error code the client saw. */
  code: string;
  firstEventMs?: number;
  totalMs: number;
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * A request placed on a llama-server and answered: the conversation lives there now and the server
 * holds these prompt prefixes (the chain's first two and its last: enough for the conversation's next
 * turn and for the shared system prompt and tools). Shared through the hub so every isolate places
 * the conversation's next turn alike.
 */
export interface PlacementNote {
  url: string;
  key: string | null;
  prefixes: Array<{ hash: string; chars: number }>;
  at: number;
}

/** The placement notes the hub has received since an isolate last asked (`seq` to ask from next time). */
export interface PlacementNews {
  seq: number;
  notes: PlacementNote[];
}

/**
 * What an isolate tells the health hub about the requests it finished since its last report: sent
 * with `ctx.waitUntil`, at once when an attempt failed, otherwise batched for up to
 * `health.snapshotTtlMs` (one Durable Object call a second per isolate, not one per request).
 */
export interface HealthReport {
  upstreams: UpstreamRef[];
  attempts: AttemptSignal[];
  outcomes: RequestOutcome[];
  /** Absent from isolates of an older deploy. */
  placements?: PlacementNote[];
  policy: {
    circuit: { failureThreshold: number; cooldownMs: number; maxCooldownMs: number };
    health: { sampleMs: number; idleStopMs: number };
  };
}
