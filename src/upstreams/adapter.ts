// What an upstream kind can do, as routing and the routes ask it: one adapter per kind (llama/,
// browser/, openai/), registered in registry.ts. Routing never reads a target's `kind`; it asks the
// adapter's capabilities and operations, so a new kind is one folder and one registry line.

import type { TargetConfig } from "../config/config-schema.ts";
import type { RouterModel } from "../health/parse-router-models.ts";
import type { EnvVars } from "../config/env-vars.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { AttemptContext, Upstream } from "./upstream.ts";

/** A configured target with the client-facing name routing reports it by. */
export type NamedTarget<T extends TargetConfig = TargetConfig> = T & {
  name: string;
  /** Added by zero config rather than declared: its "no session" never hides an earlier failure. */
  implicit?: boolean;
};

/**
 * A server Switchyard tracks itself: its health (passive signals, the hub's probe), its circuit,
 * the placement ledger, and the admission queue when its concurrency is known.
 */
export interface TrackedServer {
  /** The server's identity in health snapshots, the ledger and the queue (upstreamKey of its URL). */
  key: string;
  /** Base URL the health hub probes. */
  url: string;
  /** The Worker secret with its API key, if any. */
  apiKeySecret?: string;
  /** Extra headers every request to it carries (a gateway's own headers). */
  headers?: Record<string, string>;
  /**
   * How the health hub probes it: `llama` (llama-server's /health, /slots, /props, /metrics) or
   * `models` (an OpenAI-compatible `GET /v1/models` only: such a server is never asked for more).
   */
  probe: "llama" | "models";
  /**
   * It reports how many requests it serves at once (llama-server's slots): the admission queue gates
   * on that count. False: it queues inside itself and Switchyard does not gate it.
   */
  reportsSlots: boolean;
  /** Its context window is learned from its probe (context fit skips it when the prompt cannot fit). */
  reportsContextWindow: boolean;
  /** Share of new conversations when its model balances (`least-busy`). */
  weight: number;
  /** The model name sent to it when the target declares one (a router's model); else the requested name. */
  upstreamModel?: string;
}

/** What routing may ask of a target, whatever its kind. */
export interface Capabilities {
  /** The server Switchyard tracks, or null when the adapter places requests among its own engines (browser sessions). */
  server: TrackedServer | null;
  /** A stable identity for rendezvous hashing and logs (the server key, or the browser model). */
  identity: string;
  /**
   * It can continue an answer given as a trailing assistant message (an assistant prefill), so a
   * broken answer can go on there (routing/continuation/). `withPromptTools`: also when tools are
   * sent in the prompt under a grammar, which a continuation would start over (false: not then).
   */
  continues: { withPromptTools: boolean } | null;
  /** A retryable failure may be retried on the same target (a server), not only moved to the next one. */
  retriesSameTarget: boolean;
  /**
   * It places a conversation among its own engines by the prompt's chain of hashes and skips engines
   * whose window cannot hold it (the browser hub): the attempt context carries promptChain and promptTokens.
   */
  placesByPrompt: boolean;
  /** A teammate's own device (a browser session): a key whose browser policy is `deny` may not use it. */
  teammateDevice: boolean;
}

/** Where a count of tokens or a model's description is asked from. */
export interface AskContext {
  env: EnvVars;
  requestId: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What GET /v1/models reports of a model, from its first target that can tell. */
export interface ModelDescription {
  contextWindow?: number;
  vision: boolean;
  reasoning: boolean;
}

/**
 * A server that loads models on demand (llama-server's router mode): its model limit (`--models-max`,
 * Infinity when none), every model it can serve with its status, and a loaded model's slots.
 */
export interface ModelPoolRead {
  modelsMax: number;
  models: RouterModel[];
  slots?: number;
}

/** The legacy text-completions body, as the route validated it (with the output bound the meter set). */
export type CompletionsBody = Record<string, unknown> & { model: string };

/** An embeddings request body, as the route validated it. */
export type EmbeddingsBody = Record<string, unknown> & { model: string };

/** One upstream kind: its capabilities and what it can be asked to do. */
export interface TargetAdapter<T extends TargetConfig = TargetConfig> {
  /** The client-facing name of a target: kind and host only, never a path or query that could hold secrets. */
  name(target: T): string;
  capabilities(target: NamedTarget<T>): Capabilities;
  /** Chat completions as internal events. */
  chat(target: NamedTarget<T>): Upstream;
  /**
   * The tool-call policy's constrained retry: the same target with the tools in the prompt and a
   * grammar forcing a call. Absent: the kind cannot constrain its output, and the retry is not tried.
   */
  constrained?(target: NamedTarget<T>): Upstream;
  /** Legacy text completions (`/v1/completions`) as internal events. Absent: the kind cannot. */
  completions?(target: NamedTarget<T>, body: CompletionsBody): Upstream;
  /**
   * An embeddings response body (OpenAI's shape). Absent: the kind cannot. Rejects with a ProxyError;
   * `CapabilityMissing` when this target cannot serve embeddings now (the route skips it).
   */
  embeddings?(target: NamedTarget<T>, body: EmbeddingsBody, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>>;
  /** The tokens a chat request's prompt takes on this target (Anthropic's count_tokens). Absent: estimated. */
  countPromptTokens?(target: NamedTarget<T>, request: ChatRequest, ctx: AskContext): Promise<number>;
  /** The tokens of a text (an answer's prefill when it is continued here). Absent: not counted. */
  countTextTokens?(target: NamedTarget<T>, text: string, ctx: AskContext): Promise<number>;
  /** What the model list says of the model this target serves. Absent, or null: nothing known. */
  describeModel?(target: NamedTarget<T>, ctx: AskContext): Promise<ModelDescription | null>;
  /**
   * How many requests the server serves at once, read from the server itself (for a server that
   * `reportsSlots`, before the hub's first sample). Undefined when it cannot tell now; never throws.
   */
  readSlotCount?(target: NamedTarget<T>, env: EnvVars, timeoutMs: number): Promise<number | undefined>;
  /**
   * Whether the server loads models on demand, and its models now: null when it cannot tell now,
   * "single" when it serves one model. Absent: the kind never pools models. Never throws.
   */
  readModelPool?(target: NamedTarget<T>, env: EnvVars, timeoutMs: number): Promise<ModelPoolRead | "single" | null>;
  /** Asks a pooling server to load `model` (putting back a model it evicted for nothing). Never throws. */
  loadPooledModel?(target: NamedTarget<T>, model: string, env: EnvVars, timeoutMs: number): Promise<boolean>;
}
