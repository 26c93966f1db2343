// The chat completions stream as SSE: `data: <chunk>` per chunk, then `data: [DONE]`. A plain text
// delta is written from bytes encoded once per response, so a token builds no chunk object.
import type { ByteQueue } from "../../responders/byte-queue.ts";
import type { SseEncoder } from "../../responders/sse-response.ts";
import type { ChunkEncoder } from "./chunk-encoder.ts";

const utf8 = new TextEncoder();
/** What follows the delta's string in a plain delta chunk. */
const PLAIN_DELTA_END = utf8.encode(`},"finish_reason":null,"logprobs":null}]}\n\n`);

/** Chat completions framing: `data: <chunk>` per chunk and `data: [DONE]` at the end. */
export function chatSseEncoder(encoder: ChunkEncoder): SseEncoder {
  const frames = (chunks: Record<string, unknown>[], out: ByteQueue) => {
    for (const c of chunks) out.text(`data: ${JSON.stringify(c)}\n\n`);
  };
  // The common frame — one text or reasoning delta — is written from its constant start and end
  // (encoded once per response) around the escaped delta: byte for byte what JSON.stringify of the
  // chunk object gives.
  let contentStart: Uint8Array | undefined;
  let reasoningStart: Uint8Array | undefined;
  const plain = (start: Uint8Array, delta: string, out: ByteQueue) => out.jsonStringBetween(start, delta, PLAIN_DELTA_END);
  return {
    encode: (event, out) => {
      if (encoder.plainDeltaReady) {
        if (event.type === "text" && !event.logprobs) return plain((contentStart ??= utf8.encode(`data: ${encoder.deltaPrefix()}{"content":`)), event.delta, out);
        if (event.type === "reasoning") return plain((reasoningStart ??= utf8.encode(`data: ${encoder.deltaPrefix()}{"reasoning_content":`)), event.delta, out);
      }
      frames(encoder.encode(event), out);
    },
    end: (out) => {
      frames(encoder.end(), out);
      out.text("data: [DONE]\n\n");
    },
    get failed() {
      return encoder.failed !== null;
    },
  };
}
