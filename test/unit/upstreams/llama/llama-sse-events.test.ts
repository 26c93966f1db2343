import { describe, expect, it } from "vitest";
import { llamaSseEvents } from "../../../../src/upstreams/llama/parse-llama-sse.ts";
import { readLlamaSse } from "./read-llama-sse.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import type { EventStreamReader } from "../../../../src/events/event-source.ts";

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

async function all(r: EventStreamReader): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for (let x = await r.read(); !x.done; x = await r.read()) out.push(x.value);
  return out;
}

describe("llamaSseEvents (llamaSseReader read straight from the body)", () => {
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ finish_reason: finish, index: 0, delta }], created: 1, id: "x", model: "m", object: "chat.completion.chunk" })}\n\n`;
  const streams: Record<string, string> = {
    "plain text": chunk({ role: "assistant", content: null }) + chunk({ content: "Hel" }) + chunk({ content: "lo" }) + chunk({}, "stop") + "data: [DONE]\n\n",
    "keep-alive comments and CRLF": `: ping\r\n\r\n${chunk({ content: "a" }).replace(/\n/g, "\r\n")}${chunk({}, "stop")}data: [DONE]\n\n`,
    "old error line then [DONE]": `${chunk({ content: "a" })}error: {"code":500,"message":"boom","type":"server_error"}\n\ndata: [DONE]\n\n`,
    "ends unfinished": chunk({ content: "a" }) + chunk({ content: "b" }),
    "last frame without its blank line": chunk({ content: "a" }) + `data: ${JSON.stringify({ choices: [{ finish_reason: "stop", index: 0, delta: {} }] })}`,
  };
  it.each(Object.keys(streams))("%s: the same events as the whole body pushed at once, split anywhere", async (name) => {
    const bytes = enc.encode(streams[name]!);
    for (const size of [1, 7, 64, bytes.length]) {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      expect(await all(llamaSseEvents(body(parts), "llama:t"))).toEqual(readLlamaSse([bytes], "llama:t"));
    }
  });

  it("errors when the body errors mid-stream", async () => {
    const r = llamaSseEvents(body([enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')], new Error("reset")), "llama:t");
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
    const r = llamaSseEvents(src, "llama:t");
    await r.read();
    await r.cancel("client left");
    expect(cancelled).toBe("client left");
    expect(await r.read()).toEqual({ done: true, value: undefined });
  });

  it("a read pending when it is cancelled ends as done, without the unfinished-stream error", async () => {
    const src = new ReadableStream<Uint8Array>({ start() {} });
    const r = llamaSseEvents(src, "llama:t");
    const pending = r.read();
    await r.cancel("timeout");
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("gives every event of a chunk that carries several frames, one per read", async () => {
    const two = enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n');
    const r = llamaSseEvents(body([two]), "llama:t");
    expect(await r.read()).toEqual({ done: false, value: { type: "text", delta: "a" } });
    expect(await r.read()).toEqual({ done: false, value: { type: "text", delta: "b" } });
    expect(await r.read()).toMatchObject({ done: false, value: { type: "error" } });
    expect(await r.read()).toEqual({ done: true, value: undefined });
  });
});
