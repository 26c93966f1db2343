// Embeddings (`/v1/embeddings`) from a browser session's web-llm embedding model, in OpenAI's shape.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { RelayLine } from "../../schemas/relay.ts";
import type { BrowserTarget } from "../../config/config-schema.ts";
import { within } from "../../lib/deadlines.ts";
import type { AttemptContext } from "../upstream.ts";
import { openRelay } from "./browser-upstream.ts";
import { mapWebLlmError } from "./map-web-llm-error.ts";
import { hubRetryAfter } from "./relay-events.ts";
import { tokenCount } from "./normalize-web-llm-chunk.ts";

/**
 * Pure: a validated `/v1/embeddings` request → a body web-llm 0.2.86's `engine.embeddings.create`
 * accepts: `model` the session's model; `user` dropped (web-llm rejects it with
 * UnsupportedFieldsError); `encoding_format` dropped (web-llm returns floats and rejects "base64":
 * the Worker encodes them when base64 was asked for, which the openai client does by default);
 * `dimensions` refused (web-llm cannot).
 */
export function adaptEmbeddingsForWebLlm(req: Record<string, unknown>, model: string): Record<string, unknown> {
  if (req.dimensions != null) throw new ProxyError({ status: 400, code: "unsupported_parameter", param: "dimensions", retryable: true, message: "Browser sessions (web-llm) do not support dimensions." });
  const body: Record<string, unknown> = { ...req, model };
  delete body.user;
  delete body.dimensions;
  delete body.encoding_format;
  return body;
}

/**
 * `/v1/embeddings` on a browser session with an embedding model: the page answers with one `chunk`
 * carrying web-llm's whole `{object: "list", data, model, usage}` and then `done`, read within
 * `totalMs`. Throws `BrowserUnableError` (from the hub) when no session has an embedding model for
 * it, so the caller can skip the target without counting an attempt.
 */
export async function fetchBrowserEmbeddings(target: BrowserTarget, name: string, req: Record<string, unknown>, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  const body = adaptEmbeddingsForWebLlm(req, target.model);
  const out = await openRelay("embeddings", target.model, body, ctx);
  let text: string;
  try {
    text = await within(new Response(out).text(), totalMs, ctx.deadlines, () => {
      throw new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: `${name} did not finish the embeddings within timeouts.totalMs (${totalMs} ms).` });
    });
  } catch (e) {
    out.cancel().catch(() => {});
    if (e instanceof ProxyError) throw e;
    throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name}: the relay failed (${String(e)}).` });
  }
  let result: Record<string, unknown> | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let msg: RelayLine;
    try {
      msg = JSON.parse(line) as RelayLine;
    } catch {
      throw broken(name, "the relay sent a line that is not JSON");
    }
    if (msg.type === "error") throw mapWebLlmError(msg.kind, msg.message, name, hubRetryAfter(msg));
    if (msg.type === "chunk") {
      const data = msg.data as Record<string, unknown>;
      if (data.object === "list" && Array.isArray(data.data)) result = data;
      else throw broken(name, "the browser session answered embeddings with something that is not an embeddings list");
    }
    if (msg.type === "done") {
      if (!result) throw broken(name, "the browser session finished without embeddings");
      const usage = result.usage as { prompt_tokens?: unknown; total_tokens?: unknown } | undefined;
      const promptTokens = tokenCount(usage?.prompt_tokens);
      const data = req.encoding_format === "base64" ? (result.data as Array<Record<string, unknown>>).map((d) => ({ ...d, embedding: floatsAsBase64(d.embedding as number[]) })) : result.data;
      // OpenAI's usage shape: web-llm's `extra` (prefill rate) is dropped.
      return { ...result, data, usage: { prompt_tokens: promptTokens, total_tokens: Math.max(promptTokens, tokenCount(usage?.total_tokens)) } };
    }
  }
  throw broken(name, "the browser session's answer ended without done or error");
}

/** OpenAI's base64 embedding: the vector as little-endian float32 bytes, base64-encoded. */
export function floatsAsBase64(v: number[]): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  v.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

function broken(name: string, why: string): ProxyError {
  return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name}: ${why}.` });
}
