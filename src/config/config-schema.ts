// What SWITCHYARD_CONFIG may say: every setting's shape and bounds, as one zod schema (long because
// it is one object on purpose: the launcher, the Worker and the exported JSON Schema read this one object).
import * as z from "zod/mini";
import { MODEL_NAME_MAX } from "./model-name.ts";

// The one schema for SWITCHYARD_CONFIG. The launcher validates with it before `wrangler dev` starts,
// the Worker once per isolate, and `npm run config:schema` exports it as docs/config.schema.json.
// Objects are strict: a misspelt key is a configuration error, not a silently ignored setting.

const positiveMs = z.int().check(z.positive());

/**
 * Which fields hold secrets, marked where they are declared so that redaction (src/config/config-secrets.ts
 * walks a parsed configuration by this schema) cannot miss one: "env-name", the name of a Worker secret
 * whose value is secret; "values", a record whose values are secrets themselves (headers). A new field
 * that carries a credential is made of one of these two schemas, or registered here.
 */
export const secretFields = z.registry<{ secret: "env-name" | "values" }>();

/** The name of a Worker secret (its value is redacted wherever text is logged, captured or shown). */
const SecretNameSchema = z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).register(secretFields, { secret: "env-name" });

export const LlamaTargetSchema = z.strictObject({
  kind: z.literal("llama"),
  /** Base URL of a llama-server, e.g. https://gpu-1.example.com (no /v1 suffix needed). */
  url: z.string().check(z.url({ protocol: /^https?$/ })),
  /** The model name sent upstream (llama-server router mode); default: the requested name. */
  model: z.optional(z.string().check(z.minLength(1))),
  /** Name of the Worker secret holding this server's `--api-key`. */
  apiKeySecret: z.optional(SecretNameSchema),
  /** Body fields removed before the request goes to this upstream. */
  strip: z.optional(z.array(z.string().check(z.minLength(1)))),
  /** Body fields forced to these values for this upstream. */
  set: z.optional(z.record(z.string(), z.unknown())),
  /** Share of new conversations among a model's llama targets when it balances (`balance: "least-busy"`). */
  weight: z.optional(z.number().check(z.positive())),
  tools: z.optional(z.enum(["native", "prompt"])),
});

/**
 * A llama-server in router mode (`--models-dir`, no `-m`) whose every model Switchyard serves under
 * its own name: `routers` lists them instead of a target list per model (docs/configuration.md).
 */
export const RouterServerSchema = z.strictObject({
  /** Base URL of the router, e.g. https://gpu-1.example.com. */
  url: z.string().check(z.url({ protocol: /^https?$/ })),
  /** Name of the Worker secret holding this server's `--api-key`. */
  apiKeySecret: z.optional(SecretNameSchema),
  /** Share of new conversations among the routers holding a model. */
  weight: z.optional(z.number().check(z.positive())),
  tools: z.optional(z.enum(["native", "prompt"])),
});

/**
 * A self-hosted web-llm model: where web-llm fetches its files from, as web-llm's own model record
 * names them (its `model` and `model_lib`).
 */
export const MlcRecordSchema = z.strictObject({
  /**
   * The model's folder: `mlc-chat-config.json`, the tokenizer, `tensor-cache.json` and the weight
   * shards (web-llm's `model`). web-llm reads them under `<url>/resolve/main/` unless the URL already
   * has a `/resolve/<revision>/` part, as a model hub repository's URL does.
   */
  url: z.string().check(z.url({ protocol: /^https?$/ })),
  /** The model library, a `.wasm` compiled for the page's web-llm version (web-llm's `model_lib`). */
  lib: z.string().check(z.url({ protocol: /^https?$/ })),
});

export const BrowserTargetSchema = z
  .strictObject({
    kind: z.literal("browser"),
    /**
     * The model id a connected page must be serving: a web-llm model id (e.g.
     * Qwen2.5-0.5B-Instruct-q4f32_1-MLC), or with `gguf` the id tabs serve that file as.
     */
    model: z.string().check(z.minLength(1)),
    /**
     * A GGUF file tabs run with llama.cpp in WebAssembly (any http(s) URL the page can fetch with CORS:
     * a model hub, R2, the team's own server). The same file as a llama-server of the model: an answer
     * cut off on one is continued on the other. Absent: a web-llm model.
     */
    gguf: z.optional(z.string().check(z.url({ protocol: /^https?$/ }))),
    /**
     * A web-llm model the team hosts itself (any http(s) URLs the page can fetch with CORS): tabs add
     * this record to web-llm's list under `model` (it replaces web-llm's own record of that id).
     * Absent: web-llm's prebuilt record of `model`. Not with `gguf`.
     */
    mlc: z.optional(MlcRecordSchema),
  })
  .check(
    z.superRefine((target, ctx) => {
      if (target.gguf !== undefined && target.mlc !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["mlc"],
          message: "must not be set together with gguf: a browser target runs either a GGUF file with llama.cpp (gguf) or a web-llm model (mlc), so keep the one tabs should run",
          input: target.mlc,
        });
      }
    }),
  )
  // The same rule for editors that read docs/config.schema.json.
  .register(z.globalRegistry, { not: { required: ["gguf", "mlc"] } });

/** A header name (an HTTP token) and the headers Switchyard sets itself or takes from `apiKeySecret`. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const OWN_HEADERS = new Set(["accept", "authorization", "connection", "content-length", "content-type", "host", "transfer-encoding", "x-request-id"]);

/** Extra request headers: valid names, none Switchyard sets itself, values on one line. */
const HeadersSchema = z.record(z.string(), z.string()).check(
  z.superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      const message = !HEADER_NAME.test(name)
        ? "must be a header name: letters, digits and ! # $ % & ' * + . ^ _ ` | ~ -"
        : lower === "authorization"
          ? 'must not be "authorization": name the Worker secret holding the key in apiKeySecret instead (it is sent as Authorization: Bearer)'
          : OWN_HEADERS.has(lower)
            ? `must not be "${lower}": Switchyard sets it itself`
            : /[\r\n\0]/.test(value)
              ? "must be a value on one line (no CR, LF or NUL)"
              : undefined;
      if (message) ctx.addIssue({ code: "custom", path: [name], message, input: value });
    }
  }),
).register(secretFields, { secret: "values" }); // a gateway's header may carry a credential

export const OpenAiTargetSchema = z.strictObject({
  kind: z.literal("openai"),
  /**
   * Base URL of an OpenAI-compatible server, with or without its trailing /v1: http://gpu-1:8000
   * (vLLM), http://127.0.0.1:11434 (Ollama). Only its OpenAI endpoints are asked: /v1/chat/completions,
   * /v1/completions, /v1/embeddings and /v1/models.
   */
  url: z.string().check(z.url({ protocol: /^https?$/ })),
  /** The model name sent upstream; default: the requested name. */
  model: z.optional(z.string().check(z.minLength(1))),
  /** Name of the Worker secret holding this server's API key, sent as `Authorization: Bearer`. */
  apiKeySecret: z.optional(SecretNameSchema),
  /**
   * Extra headers on every request to this server, health probes included (a gateway's own, such as
   * Portkey's x-portkey-provider): sent as given and never logged. The configuration is not a secret
   * store: a key belongs in apiKeySecret.
   */
  headers: z.optional(HeadersSchema),
  /** Body fields removed before the request goes to this upstream. */
  strip: z.optional(z.array(z.string().check(z.minLength(1)))),
  /** Body fields forced to these values for this upstream. */
  set: z.optional(z.record(z.string(), z.unknown())),
  /** Share of new conversations among a model's tracked targets when it balances (`balance: "least-busy"`). */
  weight: z.optional(z.number().check(z.positive())),
  /** "native" (default): `tools` go to the server; "prompt": described in the prompt, the reply constrained by `response_format` json_schema and read by Switchyard. */
  tools: z.optional(z.enum(["native", "prompt"])),
  /**
   * How the server continues an answer given as a trailing assistant message, when it can (then a
   * broken answer may be continued here): "assistant" as it is (Ollama); "continue_final_message"
   * with `continue_final_message: true, add_generation_prompt: false` (vLLM, SGLang, TGI); "prefix"
   * with `prefix: true` on that message (Mistral); "partial" with `partial: true`
   * on it (Moonshot). Absent: never continued here.
   */
  prefill: z.optional(z.enum(["assistant", "continue_final_message", "prefix", "partial"])),
});

export const TargetSchema = z.discriminatedUnion("kind", [LlamaTargetSchema, BrowserTargetSchema, OpenAiTargetSchema]);

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
  /** Responses WebSockets one key may hold open at once, across isolates (429 too_many_sockets above it). Default 8. */
  maxSocketsPerKey: z.optional(z.int().check(z.positive())),
  /** Messages one Responses WebSocket takes before it is closed (4429); the client reconnects. Default 10000. */
  maxMessagesPerSocket: z.optional(z.int().check(z.positive())),
  /**
   * The rate, in bytes a second, a Responses WebSocket's client is assumed to read at: past
   * `maxBodyBytes` sent beyond it, the answer's upstream is paused, and a socket held back as long
   * as that takes to drain is closed (4408). Default 262144 (256 KiB/s, above any model's output).
   */
  socketReadBytesPerS: z.optional(z.int().check(z.positive())),
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
  /** One line for every isolate: the pool's AdmissionHub Durable Object grants slots and keeps the fair order (the default where deployed); false (the default under npm start): each isolate's own line. */
  shared: z.optional(z.boolean()),
});

export const BatchConfigSchema = z.strictObject({
  /** Slots of each server a batch line leaves free while interactive requests for its model came in the last 10 s (never every slot of a server). */
  keepFreeSlots: z.optional(z.int().check(z.gte(0), z.lte(64))),
  /** Lines of one key's batches run at once (each still waits for an idle slot). */
  concurrency: z.optional(z.int().check(z.gte(1), z.lte(64))),
  /** The largest file a key may upload, in bytes. */
  maxFileBytes: z.optional(z.int().check(z.gte(1024), z.lte(200 * 1024 * 1024))),
  /** The most request lines in one batch file. */
  maxLines: z.optional(z.int().check(z.gte(1), z.lte(50_000))),
  /** The most files (inputs and results) one key keeps at once. */
  maxFilesPerKey: z.optional(z.int().check(z.gte(1), z.lte(10_000))),
  /** How long files and finished batches are kept, in days. */
  retentionDays: z.optional(z.int().check(z.gte(1), z.lte(365))),
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

/** Where traces go: an OpenTelemetry collector's OTLP/HTTP base URL (spans are POSTed as JSON to `<endpoint>/v1/traces`). */
export const OtlpSchema = z.strictObject({
  /** The collector's base URL, e.g. http://127.0.0.1:4318 (an OpenTelemetry Collector's OTLP/HTTP receiver). */
  endpoint: z.string().check(z.url({ protocol: /^https?$/ })),
  /** Extra headers on every export (a hosted collector's API key header, say). */
  headers: z.optional(HeadersSchema),
  /** The Worker secret holding the collector's key, sent as Authorization: Bearer (like a target's). */
  apiKeySecret: z.optional(SecretNameSchema),
  /** How long one export may take before it is abandoned and its spans dropped (default 5000). */
  timeoutMs: z.optional(z.int().check(z.positive(), z.lte(30_000))),
});

/** The request log, capture and traces (docs/observability.md). */
export const ObservabilitySchema = z.strictObject({
  /** The request log behind GET /v1/admin/requests: on unless false. */
  log: z.optional(z.boolean()),
  /** The log keeps at most this many requests, the newest (default 10000). */
  maxRecords: z.optional(z.int().check(z.gte(10), z.lte(1_000_000))),
  /** ...and none older than this (default 7 days). */
  maxAgeMs: z.optional(z.int().check(z.gte(60_000))),
  /** Also keep each request's body and answer, secrets redacted (default false: no prompts are kept). */
  capture: z.optional(z.boolean()),
  /** A captured body or answer is cut at this many bytes, with a marker (default 32768). */
  captureMaxBytes: z.optional(z.int().check(z.gte(1024), z.lte(512 * 1024))),
  /** Only the newest this many requests keep their capture (default 1000). */
  captureMaxRecords: z.optional(z.int().check(z.gte(1), z.lte(100_000))),
  /** OpenTelemetry traces over OTLP/HTTP JSON; off unless set. */
  otlp: z.optional(OtlpSchema),
});

export const ConfigSchema = z.strictObject({
  models: z.optional(z.record(z.string().check(z.minLength(1), z.maxLength(MODEL_NAME_MAX)), ModelSchema)),
  /**
   * llama-server routers serving every model they list: a model name not declared in `models` goes
   * to the routers that list it, placed by which has it loaded (docs/configuration.md, "Router pools").
   */
  routers: z.optional(z.array(RouterServerSchema).check(z.minLength(1), z.maxLength(64))),
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
  /** The Batch API's limits and its runner on idle capacity (see docs/configuration.md). */
  batch: z.optional(BatchConfigSchema),
  /** The request log, capture and OpenTelemetry traces (see docs/observability.md). */
  observability: z.optional(ObservabilitySchema),
});

export type LlamaTarget = z.infer<typeof LlamaTargetSchema>;
export type BrowserTarget = z.infer<typeof BrowserTargetSchema>;
export type RouterServer = z.infer<typeof RouterServerSchema>;
export type OpenAiTarget = z.infer<typeof OpenAiTargetSchema>;
export type TargetConfig = z.infer<typeof TargetSchema>;
export type BrowserPolicy = z.infer<typeof BrowserPolicySchema>;
export type ConfigInput = z.infer<typeof ConfigSchema>;
