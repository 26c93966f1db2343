// Capture (opt-in): a request's body and its answer as the request log keeps them, every configured
// secret redacted and each part cut at a bound with a marker; a stream's answer assembled (pure).
import { redactSecrets } from "../errors/redact-secrets.ts";
import { dataOf } from "./answer-facts.ts";

/** What `GET /v1/admin/requests/{id}` shows under `capture`. */
export interface Capture {
  /** The request body as received (JSON text), redacted and bounded. */
  request: string;
  /** The answer: a non-stream body as sent, or a stream's text, reasoning and tool calls assembled (JSON text). */
  response: string;
  /** Some part was cut at `captureMaxBytes`, or the stream was longer than what was kept. */
  truncated: boolean;
}

/** The marker that ends a part cut at the bound. */
export const TRUNCATED_MARKER = "…[truncated by Switchyard]";

/** `text` with every secret taken out, cut to at most `maxBytes` of UTF-8 (the marker included). */
export function boundedText(text: string, secrets: readonly string[], maxBytes: number): { text: string; truncated: boolean } {
  const clean = redactSecrets(text, secrets);
  const bytes = new TextEncoder().encode(clean);
  if (bytes.length <= maxBytes) return { text: clean, truncated: false };
  const room = Math.max(0, maxBytes - new TextEncoder().encode(TRUNCATED_MARKER).length);
  // A character cut in two at the bound is dropped (the decoder's U+FFFD is removed).
  const head = new TextDecoder().decode(bytes.subarray(0, room)).replace(/\uFFFD$/, "");
  return { text: head + TRUNCATED_MARKER, truncated: true };
}

interface Assembled {
  text: string;
  reasoning: string;
  tool_calls: Array<{ name: string; arguments: string }>;
  error?: unknown;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A stream's answer as the client would have read it: its text, reasoning and tool calls put
 * together from the frames of any API (chat and text completion chunks, Responses and Messages events).
 */
export function assembleStream(sse: string): Assembled {
  const out: Assembled = { text: "", reasoning: "", tool_calls: [] };
  // Tool calls by their index in the API's own numbering.
  const calls = new Map<string, { name: string; arguments: string }>();
  const call = (key: string) => {
    let c = calls.get(key);
    if (!c) calls.set(key, (c = { name: "", arguments: "" }));
    return c;
  };
  for (const block of sse.split("\n\n")) {
    const data = dataOf(block);
    if (data === undefined || data === "[DONE]") continue;
    let frame: unknown;
    try {
      frame = JSON.parse(data);
    } catch {
      continue;
    }
    if (!isObject(frame)) continue;
    if (isObject(frame.error) || frame.type === "error") out.error = frame.error ?? frame;
    // Chat and text completion chunks.
    const choice = Array.isArray(frame.choices) && isObject(frame.choices[0]) ? frame.choices[0] : undefined;
    if (choice) {
      if (typeof choice.text === "string") out.text += choice.text;
      const delta = isObject(choice.delta) ? choice.delta : undefined;
      if (delta) {
        if (typeof delta.content === "string") out.text += delta.content;
        if (typeof delta.reasoning_content === "string") out.reasoning += delta.reasoning_content;
        if (Array.isArray(delta.tool_calls)) {
          for (const tc of delta.tool_calls) {
            if (!isObject(tc)) continue;
            const c = call(`chat:${String(tc.index ?? 0)}`);
            const fn = isObject(tc.function) ? tc.function : {};
            if (typeof fn.name === "string") c.name = fn.name;
            if (typeof fn.arguments === "string") c.arguments += fn.arguments;
          }
        }
      }
    }
    // Responses events.
    if (frame.type === "response.output_text.delta" && typeof frame.delta === "string") out.text += frame.delta;
    if (frame.type === "response.reasoning_text.delta" && typeof frame.delta === "string") out.reasoning += frame.delta;
    if (frame.type === "response.output_item.done" && isObject(frame.item) && typeof frame.item.name === "string") {
      const c = call(`responses:${String(frame.output_index ?? 0)}`);
      c.name = frame.item.name;
      c.arguments = typeof frame.item.arguments === "string" ? frame.item.arguments : typeof frame.item.input === "string" ? frame.item.input : JSON.stringify(frame.item.action ?? "");
    }
    // Messages events.
    if (frame.type === "content_block_start" && isObject(frame.content_block) && frame.content_block.type === "tool_use") {
      call(`messages:${String(frame.index ?? 0)}`).name = String(frame.content_block.name ?? "");
    }
    if (frame.type === "content_block_delta" && isObject(frame.delta)) {
      const d = frame.delta;
      if (d.type === "text_delta" && typeof d.text === "string") out.text += d.text;
      if (d.type === "thinking_delta" && typeof d.thinking === "string") out.reasoning += d.thinking;
      if (d.type === "input_json_delta" && typeof d.partial_json === "string") call(`messages:${String(frame.index ?? 0)}`).arguments += d.partial_json;
    }
  }
  out.tool_calls = [...calls.values()];
  return out;
}

/** The configured secrets' values: ADMIN_TOKEN, SERVE_TOKEN, each target's and the collector's apiKeySecret, and the caller's own credential. */
export function secretValues(env: Readonly<Record<string, unknown>>, names: readonly string[], credential: string | undefined): string[] {
  const values = names.map((n) => env[n]).filter((v): v is string => typeof v === "string" && v !== "");
  return credential ? [...values, credential] : values;
}
