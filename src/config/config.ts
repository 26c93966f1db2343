// The configuration the Worker runs with: SWITCHYARD_CONFIG and LLAMA_URL checked, defaults filled
// in, and the per-model lookups routing makes in it.
import { ConfigSchema, type BrowserPolicy, type ConfigInput, type RouterServer, type TargetConfig } from "./config-schema.ts";
import { describeIssue } from "../schemas/describe-issues.ts";
import { isPrivateHost } from "./private-host.ts";
import { configSecrets, type ConfigSecrets } from "./config-secrets.ts";

export interface ModelConfig {
  targets: TargetConfig[];
  balance?: "ordered" | "least-busy";
  resume?: { maxResumes: number };
}

/** Validated configuration with every default filled in. */
export interface Config {
  /**
   * Declared models, or null in zero config (every model name goes to LLAMA_URL). A null-prototype
   * object: a client's model name ("constructor", "__proto__") finds only declared models. Look names
   * up with `modelConfig`.
   */
  models: Record<string, ModelConfig> | null;
  /** llama-server routers serving every model they list (names not in `models`), or null. */
  routers: RouterServer[] | null;
  llamaUrl: string;
  /**
   * The GGUF file the server at LLAMA_URL runs, offered to tabs too (LLAMA_GGUF; `npm start` sets it
   * for LLAMA_MODEL): the model id tabs serve it as (its file name without .gguf) and its URL. Null: none.
   */
  llamaGguf: { model: string; url: string } | null;
  dev: boolean;
  limits: { maxBodyBytes: number; defaultMaxTokens: number; maxSocketsPerKey: number; maxMessagesPerSocket: number; socketReadBytesPerS: number };
  timeouts: {
    responseStartMs: number;
    firstTokenMs: number;
    idleMs: number;
    totalMs: number;
    commitMs: number;
    heartbeatMs: number;
  };
  toolCalls: { minScore: number; models: Record<string, { minScore: number }> };
  /** CORS for browser clients, or null: no CORS headers (same-origin only). */
  cors: { origins: string[]; maxAgeSeconds: number } | null;
  retries: { perTarget: number; maxAttempts: number; backoffMs: number; maxBackoffMs: number; maxRetryAfterMs: number };
  circuit: { failureThreshold: number; cooldownMs: number; maxCooldownMs: number };
  /** How often one answer may be continued elsewhere after its upstream failed mid-answer (models may override). */
  resume: { maxResumes: number };
  health: { sampleMs: number; snapshotTtlMs: number; idleStopMs: number };
  /** The admission queue: `maxWaitMs` 0 turns it off. */
  queue: { maxWaitMs: number; shared: boolean };
  /** The Batch API (docs/api.md, "Batches"): limits, retention and the runner's concurrency. */
  batch: { keepFreeSlots: number; concurrency: number; maxFileBytes: number; maxLines: number; maxFilesPerKey: number; retentionDays: number };
  browser: {
    /** For a request whose key sets no `browser` policy, and a request without a key. */
    default: BrowserPolicy;
    /** Key ids whose requests sessions connected with SERVE_TOKEN take; null: every request. */
    serveTokenServes: string[] | null;
  };
  /** The Worker secrets the configuration names and the secret values it holds (its schema's `secretFields`): what redaction takes out. */
  secrets: ConfigSecrets;
  /** The request log, capture and traces (docs/observability.md). */
  observability: {
    log: boolean;
    maxRecords: number;
    maxAgeMs: number;
    capture: boolean;
    captureMaxBytes: number;
    captureMaxRecords: number;
    /** null: no traces are exported. */
    otlp: { endpoint: string; headers: Record<string, string>; apiKeySecret: string | null; timeoutMs: number } | null;
  };
}

export const DEFAULTS = {
  llamaUrl: "http://127.0.0.1:8080",
  maxBodyBytes: 4 * 1024 * 1024,
  defaultMaxTokens: 4096,
  socket: { maxPerKey: 8, maxMessages: 10_000, readBytesPerS: 256 * 1024 },
  timeouts: {
    responseStartMs: 120_000,
    firstTokenMs: 120_000,
    idleMs: 60_000,
    totalMs: 600_000,
    commitMs: 600,
    heartbeatMs: 250,
  },
  minScore: 0,
  retries: { perTarget: 2, maxAttempts: 6, backoffMs: 100, maxBackoffMs: 1000, maxRetryAfterMs: 2000 },
  resume: { maxResumes: 3 },
  circuit: { failureThreshold: 5, cooldownMs: 10_000, maxCooldownMs: 120_000 },
  health: { sampleMs: 1000, snapshotTtlMs: 1000, idleStopMs: 60_000 },
  queue: { maxWaitMs: 30_000 },
  batch: { keepFreeSlots: 1, concurrency: 4, maxFileBytes: 50 * 1024 * 1024, maxLines: 50_000, maxFilesPerKey: 500, retentionDays: 30 },
  observability: { log: true, maxRecords: 10_000, maxAgeMs: 7 * 24 * 3600 * 1000, capture: false, captureMaxBytes: 32 * 1024, captureMaxRecords: 1000, otlpTimeoutMs: 5000 },
} as const;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: ConfigProblem[] };
export interface ConfigProblem {
  /** Where, e.g. `SWITCHYARD_CONFIG: models.qwen.targets[0].url`. */
  field: string;
  message: string;
}

export interface ConfigEnv {
  SWITCHYARD_CONFIG?: unknown;
  LLAMA_URL?: unknown;
  LLAMA_GGUF?: unknown;
  SWITCHYARD_ENV?: unknown;
}

/** Pure: turns the Worker's environment into a Config, or says what is wrong and how to fix it. */
export function parseConfig(env: ConfigEnv): ConfigResult {
  const dev = env.SWITCHYARD_ENV === "dev";
  const read = readConfigInput(env.SWITCHYARD_CONFIG);
  if (!read.ok) return read;
  const input = read.input;
  const problems: ConfigProblem[] = [];

  const llamaUrl = typeof env.LLAMA_URL === "string" && env.LLAMA_URL !== "" ? env.LLAMA_URL : DEFAULTS.llamaUrl;
  if (!/^https?:\/\/[^/]/.test(llamaUrl) || !URL.canParse(llamaUrl)) {
    problems.push({ field: "LLAMA_URL", message: `"${llamaUrl}" is not an http:// or https:// URL` });
  }
  const llamaGguf = ggufOffer(env.LLAMA_GGUF);
  if (typeof llamaGguf === "string") problems.push({ field: "LLAMA_GGUF", message: llamaGguf });
  if (!dev) problems.push(...privateAddressProblems(input, llamaUrl));
  if (problems.length) return { ok: false, problems };
  return { ok: true, config: withDefaults(input, llamaUrl, typeof llamaGguf === "string" ? null : llamaGguf, dev) };
}

/** SWITCHYARD_CONFIG read by the schema (unset or empty: every default), or each problem it has. */
function readConfigInput(raw: unknown): { ok: true; input: ConfigInput } | { ok: false; problems: ConfigProblem[] } {
  if (raw === undefined || raw === "") return { ok: true, input: {} };
  let json: unknown = raw;
  if (typeof raw === "string") {
    try {
      json = JSON.parse(raw);
    } catch (e) {
      return { ok: false, problems: [{ field: "SWITCHYARD_CONFIG", message: `is not valid JSON (${(e as Error).message})` }] };
    }
  }
  const parsed = ConfigSchema.safeParse(json);
  if (parsed.success) return { ok: true, input: parsed.data };
  const problems = parsed.error.issues.map((issue): ConfigProblem => {
    const d = describeIssue(issue, json);
    return { field: `SWITCHYARD_CONFIG${d.path ? ": " + d.path : ""}`, message: d.message };
  });
  return { ok: false, problems };
}

/**
 * A deployed Worker cannot reach loopback or private addresses: such a URL only fails later, per
 * request, with a confusing connection error. Say so up front (upstreams, then the collector).
 */
function privateAddressProblems(input: ConfigInput, llamaUrl: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const urls: { field: string; url: string }[] = [];
  if (!input.models && !input.routers) urls.push({ field: "LLAMA_URL", url: llamaUrl });
  input.routers?.forEach((r, i) => urls.push({ field: `SWITCHYARD_CONFIG: routers[${i}].url`, url: r.url }));
  for (const [name, model] of Object.entries(input.models ?? {})) {
    model.targets.forEach((t, i) => {
      if ("url" in t) urls.push({ field: `SWITCHYARD_CONFIG: models.${name}.targets[${i}].url`, url: t.url });
    });
  }
  for (const { field, url } of urls) {
    if (URL.canParse(url) && isPrivateHost(new URL(url).hostname)) {
      problems.push({
        field,
        message: `${url} is a loopback or private address, which a deployed Worker cannot reach. Expose llama-server over public HTTPS with --api-key, or through a Cloudflare Tunnel, and use that URL (see README "Reach a GPU box"). For local development, start with \`npm start\`.`,
      });
    }
  }
  const collector = input.observability?.otlp?.endpoint;
  if (collector && URL.canParse(collector) && isPrivateHost(new URL(collector).hostname)) {
    problems.push({
      field: "SWITCHYARD_CONFIG: observability.otlp.endpoint",
      message: `${collector} is a loopback or private address, which a deployed Worker cannot reach: use the collector's public HTTPS URL (with its key in apiKeySecret or headers).`,
    });
  }
  return problems;
}

/** The configuration read, with every default filled in. */
function withDefaults(input: ConfigInput, llamaUrl: string, llamaGguf: Config["llamaGguf"], dev: boolean): Config {
  const t = input.timeouts ?? {};
  return {
    models: input.models ? ownEntries(input.models) : input.routers ? ownEntries({}) : null,
    routers: input.routers ?? null,
    llamaUrl,
    llamaGguf,
    dev,
    limits: {
      maxBodyBytes: input.limits?.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
      defaultMaxTokens: input.limits?.defaultMaxTokens ?? DEFAULTS.defaultMaxTokens,
      maxSocketsPerKey: input.limits?.maxSocketsPerKey ?? DEFAULTS.socket.maxPerKey,
      maxMessagesPerSocket: input.limits?.maxMessagesPerSocket ?? DEFAULTS.socket.maxMessages,
      socketReadBytesPerS: input.limits?.socketReadBytesPerS ?? DEFAULTS.socket.readBytesPerS,
    },
    timeouts: {
      responseStartMs: t.responseStartMs ?? DEFAULTS.timeouts.responseStartMs,
      firstTokenMs: t.firstTokenMs ?? DEFAULTS.timeouts.firstTokenMs,
      idleMs: t.idleMs ?? DEFAULTS.timeouts.idleMs,
      totalMs: t.totalMs ?? DEFAULTS.timeouts.totalMs,
      commitMs: t.commitMs ?? DEFAULTS.timeouts.commitMs,
      heartbeatMs: t.heartbeatMs ?? DEFAULTS.timeouts.heartbeatMs,
    },
    toolCalls: { minScore: input.toolCalls?.minScore ?? DEFAULTS.minScore, models: ownEntries(input.toolCalls?.models ?? {}) },
    cors: input.cors ? { origins: input.cors.origins, maxAgeSeconds: input.cors.maxAgeSeconds ?? 600 } : null,
    retries: { ...DEFAULTS.retries, ...input.retries },
    resume: { ...DEFAULTS.resume, ...input.resume },
    circuit: { ...DEFAULTS.circuit, ...input.circuit },
    health: { ...DEFAULTS.health, ...input.health },
    // Deployed, a team's requests spread over many isolates and only the shared line is exact; one
    // `wrangler dev` is one isolate, whose own line is exact without a call.
    queue: { maxWaitMs: input.queue?.maxWaitMs ?? DEFAULTS.queue.maxWaitMs, shared: input.queue?.shared ?? !dev },
    batch: { ...DEFAULTS.batch, ...input.batch },
    // Under `npm start` the only tab is usually the developer's own; deployed, a tab is a
    // teammate's machine, and prompts go there only where the operator allowed it.
    browser: { default: input.browser?.default ?? (dev ? "allow" : "deny"), serveTokenServes: input.browser?.serveTokenServes ?? null },
    observability: observabilityOf(input.observability),
    secrets: configSecrets(ConfigSchema, input),
  };
}

/** The observability section with its defaults (docs/observability.md). */
function observabilityOf(o: ConfigInput["observability"]): Config["observability"] {
  const d = DEFAULTS.observability;
  return {
    log: o?.log ?? d.log,
    maxRecords: o?.maxRecords ?? d.maxRecords,
    maxAgeMs: o?.maxAgeMs ?? d.maxAgeMs,
    capture: o?.capture ?? d.capture,
    captureMaxBytes: o?.captureMaxBytes ?? d.captureMaxBytes,
    captureMaxRecords: o?.captureMaxRecords ?? d.captureMaxRecords,
    otlp: o?.otlp ? { endpoint: o.otlp.endpoint.replace(/\/+$/, ""), headers: { ...o.otlp.headers }, apiKeySecret: o.otlp.apiKeySecret ?? null, timeoutMs: o.otlp.timeoutMs ?? d.otlpTimeoutMs } : null,
  };
}

/** A copy of `record` without a prototype, so indexing it with any string finds only its own entries. */
function ownEntries<T>(record: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, record);
}

/**
 * Zero configuration's targets for a model name: the llama-server at LLAMA_URL, then any browser
 * session serving a model of that name (implicit: its "no session" never hides the server's failure).
 */
export function zeroConfigTargets(config: Config, model: string): Array<{ target: TargetConfig; implicit?: true }> {
  // The server's own GGUF, when tabs serve it under this name: the same file, so answers continue across.
  const gguf = config.llamaGguf?.model === model ? { gguf: config.llamaGguf.url } : {};
  return [{ target: { kind: "llama", url: config.llamaUrl } }, { target: { kind: "browser", model, ...gguf }, implicit: true }];
}

/**
 * LLAMA_GGUF: the URL of the GGUF the server at LLAMA_URL runs → what tabs serve it as; null when
 * unset; a sentence when it is not an http(s) URL of a `.gguf` file.
 */
export function ggufOffer(value: unknown): { model: string; url: string } | null | string {
  if (value === undefined || value === "") return null;
  if (typeof value !== "string" || !/^https?:\/\/[^/]/.test(value) || !URL.canParse(value)) return `"${String(value)}" is not an http:// or https:// URL`;
  const file = decodeURIComponent(new URL(value).pathname.split("/").pop() ?? "");
  const model = /^(.+)\.gguf$/i.exec(file)?.[1];
  if (!model) return `"${value}" does not name a .gguf file (its path must end in <model>.gguf: tabs serve it as <model>)`;
  return { model, url: value };
}

/**
 * The targets of a model name no `models` entry declares, when `routers` is set: every router, each
 * asked for the name (routing leaves out those that do not list it), placed by which has it loaded.
 * Without a name: the routers themselves (the model list reads what each lists).
 */
export function routerTargets(config: Config, model?: string): TargetConfig[] {
  return (config.routers ?? []).map((r) => ({ kind: "llama", ...r, ...(model !== undefined ? { model } : {}) }));
}

/** The balance of a model: its declared one, else "least-busy" for a router pool's, else "ordered". */
export function balanceOf(config: Config, model: string): "ordered" | "least-busy" {
  const declared = modelConfig(config, model);
  if (declared) return declared.balance ?? "ordered";
  return config.routers ? "least-busy" : "ordered";
}

/** The declared model of that name, or undefined (also in zero config); never an inherited property. */
export function modelConfig(config: Config, name: string): ModelConfig | undefined {
  return config.models && Object.hasOwn(config.models, name) ? config.models[name] : undefined;
}

/** The minimum tool-call score for a model (0: no policy). */
export function minToolCallScore(config: Config, model: string): number {
  const own = Object.hasOwn(config.toolCalls.models, model) ? config.toolCalls.models[model] : undefined;
  return own?.minScore ?? config.toolCalls.minScore;
}

/** How many times an answer of this model may be continued on another target (0: never). */
export function maxResumes(config: Config, model: string): number {
  return modelConfig(config, model)?.resume?.maxResumes ?? config.resume.maxResumes;
}
