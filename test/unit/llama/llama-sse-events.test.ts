import { describe, expect, it } from "vitest";
import { llamaSseEvents, parseLlamaSse } from "../../../src/upstreams/llama/parse-llama-sse.ts";
import type { UpstreamEvent } from "../../../src/stream/events.ts";

const enc = new TextEncoder();

function body(parts: Uint8Array[], fail?: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < parts.length) c.enqueue(parts[i++]!);
      else if (fail) c.error(fail);
      else c.close();
    },
  });
}

async function all(s: ReadableStream<UpstreamEvent>): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  const r = s.getReader();
  for (let x = await r.read(); !x.done; x = await r.read()) out.push(x.value);
  return out;
}

describe("llamaSseEvents (the pulled form of parseLlamaSse)", () => {
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ finish_reason: finish, index: 0, delta }], created: 1, id: "x", model: "m", object: "chat.completion.chunk" })}\n\n`;
  const streams: Record<string, string> = {
    "plain text": chunk({ role: "assistant", content: null }) + chunk({ content: "Hel" }) + chunk({ content: "lo" }) + chunk({}, "stop") + "data: [DONE]\n\n",
    "keep-alive comments and CRLF": `: ping\r\n\r\n${chunk({ content: "a" }).replace(/\n/g, "\r\n")}${chunk({}, "stop")}data: [DONE]\n\n`,
    "old error line then [DONE]": `${chunk({ content: "a" })}error: {"code":500,"message":"boom","type":"server_error"}\n\ndata: [DONE]\n\n`,
    "ends unfinished": chunk({ content: "a" }) + chunk({ content: "b" }),
    "last frame without its blank line": chunk({ content: "a" }) + `data: ${JSON.stringify({ choices: [{ finish_reason: "stop", index: 0, delta: {} }] })}`,
  };
  it.each(Object.keys(streams))("%s: the same events as body.pipeThrough(parseLlamaSse()), split anywhere", async (name) => {
    const bytes = enc.encode(streams[name]!);
    for (const size of [1, 7, 64, bytes.length]) {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      expect(await all(llamaSseEvents(body(parts), "llama:t"))).toEqual(await all(body(parts).pipeThrough(parseLlamaSse("llama:t"))));
    }
  });

  it("errors when the body errors mid-stream", async () => {
    const s = llamaSseEvents(body([enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')], new Error("reset")), "llama:t");
    const r = s.getReader();
    expect(await r.read()).toEqual({ done: false, value: { type: "text", delta: "a" } });
    await expect(r.read()).rejects.toThrow("reset");
  });

  it("cancelling it cancels the body", async () => {
    let cancelled: unknown = null;
    const src = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'));
      },
      cancel(reason) {
        cancelled = reason ?? "cancelled";
      },
    });
    const r = llamaSseEvents(src, "llama:t").getReader();
    await r.read();
    await r.cancel("client left");
    expect(cancelled).toBe("client left");
  });
});
