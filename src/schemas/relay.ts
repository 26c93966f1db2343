// The messages between the SessionHub and a serving page, as schemas both ends validate with.
import * as z from "zod/mini";
import { describeIssue, formatPath } from "./describe-issues.ts";

// The relay protocol between SessionHub and a serving page (docs/relay-protocol.md). One WebSocket per
// page, JSON text messages with a `type`; request-scoped messages carry the hub's request `id`. The
// page bundles this same module, so both ends validate with one set of schemas.

export const RELAY_VERSION = 1;
/** Largest message either side may send, in UTF-8 bytes of the JSON text (Cloudflare's receive limit). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** How often the page sends `{"type":"ping"}`; a session silent for two intervals is dead. */
export const PING_INTERVAL_MS = 10_000;
/** The exact ping text and its automatic answer (compared byte for byte by the runtime). */
export const PING_TEXT = '{"type":"ping"}';
export const PONG_TEXT = '{"type":"pong"}';

/** Close codes the hub uses. */
export const CLOSE = {
  unsupportedVersion: 4400,
  malformed: 4422,
  tooBig: 1009,
  replaced: 4409,
  /** The serve key that connected the session was revoked. */
  revoked: 4403,
} as const;

const Id = z.string().check(z.minLength(1), z.maxLength(128));

// Page → hub

export const HelloSchema = z.object({
  type: z.literal("hello"),
  version: z.int(),
  /** web-llm model ids this page has loaded and serves. */
  models: z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.minLength(1), z.maxLength(16)),
  capabilities: z.optional(
    z.looseObject({
      shaderF16: z.optional(z.boolean()),
      adapter: z.optional(z.string()),
      maxBufferSize: z.optional(z.number()),
      /** The page serves `endpoint: "completions"` requests (engine.completions.create) for its non-embedding models. */
      completions: z.optional(z.boolean()),
      /** Which of `models` are embedding models (web-llm `model_type: embedding`): they serve only `endpoint: "embeddings"`. */
      embeddingModels: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(16))),
      /** Which engine runs the models: web-llm (MLC, WebGPU) or llama.cpp (GGUF, WebAssembly). */
      engine: z.optional(z.enum(["web-llm", "llama.cpp"])),
      /** What really runs them, in words ("CPU, 2 threads", "WebGPU, google swiftshader"). */
      backend: z.optional(z.string().check(z.maxLength(200))),
      /** The engine's measured decode speed, tokens per second. */
      tokensPerSecond: z.optional(z.number().check(z.positive())),
      /** Per model of `models`, the most tokens one request can hold (web-llm's `context_window_size`): longer prompts go elsewhere. */
      contextWindows: z.optional(z.record(z.string().check(z.maxLength(200)), z.int().check(z.positive()))),
    }),
  ),
  /** Free text shown in logs, e.g. the browser. */
  agent: z.optional(z.string().check(z.maxLength(200))),
});

/**
 * One `chat.completion.chunk` (chat) or `text_completion` chunk (completions) exactly as web-llm
 * yielded it (only `object` and `choices` are checked).
 */
export const WebLlmChunkSchema = z.looseObject({
  object: z.enum(["chat.completion.chunk", "text_completion"]),
  choices: z.array(z.looseObject({})),
});

/** web-llm's whole `embeddings.create` answer (`{object: "list", data, model, usage}`), sent as one chunk. */
export const WebLlmEmbeddingsSchema = z.looseObject({
  object: z.literal("list"),
  data: z.array(z.looseObject({ embedding: z.array(z.number()), index: z.number() })),
});

export const ChunkSchema = z.object({ type: z.literal("chunk"), id: Id, data: z.union([WebLlmChunkSchema, WebLlmEmbeddingsSchema]) });

/** Which engine call a relayed request is for (absent in a `request` message = chat). */
export const EndpointSchema = z.enum(["chat", "completions", "embeddings"]);
export type Endpoint = z.infer<typeof EndpointSchema>;

export const RelayUsageSchema = z.looseObject({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
});

export const DoneSchema = z.object({ type: z.literal("done"), id: Id, usage: z.optional(z.nullable(RelayUsageSchema)) });

export const PageErrorSchema = z.object({
  type: z.literal("error"),
  id: Id,
  /** The error's message, without a stack. */
  message: z.string().check(z.maxLength(4000)),
  /** web-llm's error name (`err.name`, or the prefix of its string form), e.g. `ContextWindowSizeExceededError`. */
  kind: z.string().check(z.maxLength(100)),
});

export const PingSchema = z.object({ type: z.literal("ping") });

export const PageMessageSchema = z.discriminatedUnion("type", [HelloSchema, ChunkSchema, DoneSchema, PageErrorSchema, PingSchema]);

// Hub → page

export const WelcomeSchema = z.object({
  type: z.literal("welcome"),
  version: z.int(),
  sessionId: z.string(),
  maxMessageBytes: z.int(),
  pingIntervalMs: z.int(),
});

export const RequestSchema = z.object({
  type: z.literal("request"),
  id: Id,
  /** Absent or "chat": `engine.chat.completions.create(body)`; "completions": `engine.completions.create(body)`; "embeddings": `engine.embeddings.create(body)`. */
  endpoint: z.optional(EndpointSchema),
  /** The request already adapted for web-llm: pass it to the engine call `endpoint` names as is. */
  body: z.looseObject({}),
});

export const CancelSchema = z.object({ type: z.literal("cancel"), id: Id });

export const QueueSchema = z.object({ type: z.literal("queue"), model: z.string(), waiting: z.int() });

export const PongSchema = z.object({ type: z.literal("pong") });

/** `notice.code` when the usage a page reported for a request was outside what the request allows. */
export const USAGE_REJECTED = "usage_rejected";

/**
 * Informational, about request `id`: something the page sent was not taken as sent (`code`, e.g.
 * `usage_rejected`), and `message` says why. Added after version 1 shipped: a page that does not know
 * it ignores it (the bundled page does not close on an unknown hub message).
 */
export const NoticeSchema = z.object({ type: z.literal("notice"), id: Id, code: z.string().check(z.maxLength(100)), message: z.string().check(z.maxLength(4000)) });

export const HubMessageSchema = z.discriminatedUnion("type", [WelcomeSchema, RequestSchema, CancelSchema, QueueSchema, PongSchema, NoticeSchema]);

export type PageMessage = z.infer<typeof PageMessageSchema>;
export type HubMessage = z.infer<typeof HubMessageSchema>;
export type Hello = z.infer<typeof HelloSchema>;
export type WebLlmChunk = z.infer<typeof WebLlmChunkSchema>;

/** Messages the hub passes on to the Worker for one relayed request (one JSON object per line). */
export type RelayLine =
  | z.infer<typeof ChunkSchema>
  | z.infer<typeof DoneSchema>
  | z.infer<typeof PageErrorSchema>;

const encoder = new TextEncoder();

/** UTF-8 size of a message's text. */
export function messageBytes(text: string): number {
  // Fast path: every UTF-16 unit is at most 3 UTF-8 bytes.
  if (text.length * 3 <= MAX_MESSAGE_BYTES) return text.length;
  return encoder.encode(text).byteLength;
}

export type Parsed<T> = { ok: true; message: T } | { ok: false; tooBig: boolean; problem: string };

type Issue = Parameters<typeof describeIssue>[0];

/**
 * What is wrong with a message, in words that fit a close reason (zod/mini's own are "Invalid input"):
 * the field and what it must be. Of a union's shapes, the nearest one (fewest problems) is described.
 */
export function describeRelayIssue(issue: Issue, input: unknown): string {
  const where = formatPath(issue.path) || "message";
  if (issue.code === "invalid_union") {
    if ("note" in issue && issue.note === "No matching discriminator") return `${where} must be one of ${[...new Set((issue as { options?: unknown[] }).options ?? [])].map((v) => JSON.stringify(v)).join(", ")}`;
    const nearest = [...(issue.errors ?? [])].sort((a, b) => a.length - b.length)[0]?.[0];
    if (nearest) return describeRelayIssue({ ...nearest, path: [...issue.path, ...nearest.path] }, input);
  }
  if ((issue.code === "too_big" || issue.code === "too_small") && (issue.origin === "string" || issue.origin === "array")) {
    const unit = issue.origin === "string" ? "characters" : "items";
    if (issue.code === "too_big") return `${where} must be at most ${issue.maximum} ${unit}`;
    return issue.minimum === 1 ? `${where} must not be empty` : `${where} needs at least ${issue.minimum} ${unit}`;
  }
  return describeIssue(issue, input).message;
}

function parseWith<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Issue[] } } }, text: string): Parsed<T> {
  if (messageBytes(text) > MAX_MESSAGE_BYTES) return { ok: false, tooBig: true, problem: `message larger than ${MAX_MESSAGE_BYTES} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, tooBig: false, problem: "message is not JSON" };
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { ok: false, tooBig: false, problem: issue ? describeRelayIssue(issue, json) : "invalid message" };
  }
  return { ok: true, message: r.data };
}

export const parsePageMessage = (text: string): Parsed<PageMessage> => parseWith(PageMessageSchema, text);
export const parseHubMessage = (text: string): Parsed<HubMessage> => parseWith(HubMessageSchema, text);
