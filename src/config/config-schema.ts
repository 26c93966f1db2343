import * as z from "zod/mini";
import { MODEL_NAME_MAX } from "./model-name.ts";

// The one schema for SWITCHYARD_CONFIG. The launcher validates with it before `wrangler dev` starts,
// the Worker once per isolate, and `npm run config:schema` exports it as docs/config.schema.json.
// Objects are strict: a misspelt key is a configuration error, not a silently ignored setting.

const positiveMs = z.int().check(z.positive());

export const LlamaTargetSchema = z.strictObject({
  kind: z.literal("llama"),
  /** Base URL of a llama-server, e.g. https://gpu-1.example.com (no /v1 suffix needed). */
  url: z.string().check(z.url({ protocol: /^https?$/ })),
  /** The model name sent upstream (llama-server router mode); default: the requested name. */
  model: z.optional(z.string().check(z.minLength(1))),
  /** Name of the Worker secret holding this server's `--api-key`. */
  apiKeySecret: z.optional(z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
  /** Body fields removed before the request goes to this upstream. */
  strip: z.optional(z.array(z.string().check(z.minLength(1)))),
  /** Body fields forced to these values for this upstream. */
  set: z.optional(z.record(z.string(), z.unknown())),
  /** Share of new conversations among a model's llama targets when it balances (`balance: "least-busy"`). */
  weight: z.optional(z.number().check(z.positive())),
  tools: z.optional(z.enum(["native", "prompt"])),
});

export const BrowserTargetSchema = z.strictObject({
  kind: z.literal("browser"),
  /** The web-llm model id a connected page must be serving, e.g. Qwen2.5-0.5B-Instruct-q4f32_1-MLC. */
  model: z.string().check(z.minLength(1)),
});

export const TargetSchema = z.discriminatedUnion("kind", [LlamaTargetSchema, BrowserTargetSchema]);

export const ResumeSchema = z.strictObject({
  /** How many times one answer may be continued on another target after its upstream failed mid-answer (0: never). */
  maxResumes: z.int().check(z.gte(0), z.lte(5)),
});

export const ModelSchema = z.strictObject({
  targets: z.array(TargetSchema).check(z.minLength(1)),
  /** "ordered" (default): targets in the order given; "least-busy": llama targets by expected completion, prompt cache included (docs/architecture.md, Placement). */
  balance: z.optional(z.enum(["ordered", "least-busy"])),
  /** Continuing an interrupted answer on another target, for this model (overrides the top-level `resume`; `maxResumes: 0` turns it off). */
  resume: z.optional(ResumeSchema),
});

export const LimitsSchema = z.strictObject({
  /** Largest request body accepted, in bytes (413 above it). */
  maxBodyBytes: z.optional(z.int().check(z.positive())),
  /**
   * The max_tokens a request gets when it sets none and its key has a `tokensPerDay` limit: what is
   * reserved from the day at admission and sent upstream as its bound (a key's own `defaultMaxTokens`
   * overrides it). Default 4096.
   */
  defaultMaxTokens: z.optional(z.int().check(z.positive())),
});

export const TimeoutsSchema = z.strictObject({
  /** Until upstream response headers: covers connect, queueing for a slot and prefill. */
  responseStartMs: z.optional(positiveMs),
  /** Until the first delta once headers arrived. */
  firstTokenMs: z.optional(positiveMs),
  /** Longest silence between two upstream frames. */
  idleMs: z.optional(positiveMs),
  /** Longest one attempt may take in all. */
  totalMs: z.optional(positiveMs),
  /** How long a response is held for its first event before it is committed as 200. */
  commitMs: z.optional(positiveMs),
  /** Interval of keep-alives once committed and idle; also how fast a departed client is noticed. */
  heartbeatMs: z.optional(positiveMs),
});

export const RetriesSchema = z.strictObject({
  /** Tries on one target (the first included) for a failure worth repeating there: 5xx, 503/429 with a short Retry-After. */
  perTarget: z.optional(z.int().check(z.gte(1), z.lte(10))),
  /** Tries across all targets for one request. */
  maxAttempts: z.optional(z.int().check(z.gte(1), z.lte(20))),
  /** First backoff before a retry on the same target; doubles each time, with jitter. */
  backoffMs: z.optional(z.int().check(z.gte(0))),
  maxBackoffMs: z.optional(z.int().check(z.gte(0))),
  /** A Retry-After longer than this moves on to the next target instead of waiting. */
  maxRetryAfterMs: z.optional(z.int().check(z.gte(0))),
});

export const CircuitSchema = z.strictObject({
  /** Consecutive failures (connection errors, 5xx, timeouts, loading) that open an upstream's circuit. */
  failureThreshold: z.optional(z.int().check(z.gte(1))),
  /** How long an open circuit keeps traffic away before a half-open probe; doubles on each failed probe. */
  cooldownMs: z.optional(positiveMs),
  maxCooldownMs: z.optional(positiveMs),
});

export const HealthSchema = z.strictObject({
  /** How often the health hub samples /health and /slots while there is traffic. */
  sampleMs: z.optional(z.int().check(z.gte(200))),
  /** How long an isolate reuses the hub's snapshot. */
  snapshotTtlMs: z.optional(z.int().check(z.gte(0))),
  /** Sampling stops after this long without traffic. */
  idleStopMs: z.optional(positiveMs),
});

export const QueueSchema = z.strictObject({
  /** How long a request waits in line when every target of its model is at capacity, before 503 no_capacity; 0: no queue. */
  maxWaitMs: z.optional(z.int().check(z.gte(0), z.lte(600_000))),
});

const score = z.number().check(z.gte(0), z.lte(1));

export const ToolCallsConfigSchema = z.strictObject({
  /** Calls scoring below this are retried or flagged (see docs/tool-calls.md). */
  minScore: z.optional(score),
  /** Per-model minimum scores, overriding minScore. */
  models: z.optional(z.record(z.string(), z.strictObject({ minScore: score }))),
});

export const CorsSchema = z.strictObject({
  /** Origins allowed to call the API from a browser, e.g. ["https://app.example.com"]; ["*"] for any. */
  origins: z.array(z.string().check(z.regex(/^(\*|https?:\/\/[^/\s]+)$/))).check(z.minLength(1)),
  /** How long a browser may cache a preflight answer, in seconds (default 600). */
  maxAgeSeconds: z.optional(z.int().check(z.gte(0))),
});

/** Whether a request may be served by a teammate's browser tab (docs/security.md, "Browser sessions and prompts"). */
export const BrowserPolicySchema = z.enum(["allow", "deny"]);

/** A team key's public id, as `npm run keys -- list` shows it. */
export const KEY_ID_PATTERN = /^key_[A-Za-z0-9_-]{12}$/;

export const BrowserConfigSchema = z.strictObject({
  /** For requests whose key does not say (and requests without a key): "allow" under `npm start`, "deny" deployed. */
  default: z.optional(BrowserPolicySchema),
  /** Sessions connected with SERVE_TOKEN serve only these keys' requests (key ids); default: every key's. */
  serveTokenServes: z.optional(z.array(z.string().check(z.regex(KEY_ID_PATTERN))).check(z.minLength(1))),
});

export const ConfigSchema = z.strictObject({
  models: z.optional(z.record(z.string().check(z.minLength(1), z.maxLength(MODEL_NAME_MAX)), ModelSchema)),
  limits: z.optional(LimitsSchema),
  timeouts: z.optional(TimeoutsSchema),
  toolCalls: z.optional(ToolCallsConfigSchema),
  /** CORS for browser clients; off unless set (see docs/security.md). */
  cors: z.optional(CorsSchema),
  retries: z.optional(RetriesSchema),
  /** Continuing an answer on another target when its upstream fails mid-answer (docs/reliability.md). */
  resume: z.optional(ResumeSchema),
  circuit: z.optional(CircuitSchema),
  health: z.optional(HealthSchema),
  /** The admission queue: requests wait for a slot instead of being refused (see docs/configuration.md). */
  queue: z.optional(QueueSchema),
  /** Which requests browser sessions may serve (see docs/security.md). */
  browser: z.optional(BrowserConfigSchema),
});

export type LlamaTarget = z.infer<typeof LlamaTargetSchema>;
export type BrowserTarget = z.infer<typeof BrowserTargetSchema>;
export type TargetConfig = z.infer<typeof TargetSchema>;
export type BrowserPolicy = z.infer<typeof BrowserPolicySchema>;
export type ConfigInput = z.infer<typeof ConfigSchema>;
