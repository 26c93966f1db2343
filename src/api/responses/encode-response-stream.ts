import type { SseEncoder } from "../../stream/sse-response.ts";
import type { ResponseEncoder, ResponseStreamEvent } from "./response-encoder.ts";

/** Responses framing: `event: <type>` and `data: <event>` per event; no `[DONE]`. */
export function responseSseEncoder(encoder: ResponseEncoder): SseEncoder {
  return {
    encode: (event) => frames(encoder.encode(event)),
    end: () => frames(encoder.end()),
    get failed() {
      return encoder.failed !== null;
    },
  };
}

export function frames(events: ResponseStreamEvent[] | Array<{ type: string }>): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}
