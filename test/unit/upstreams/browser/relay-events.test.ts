import { describe, expect, it } from "vitest";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { relayEvents } from "../../../../src/upstreams/browser/relay-events.ts";

const enc = new TextEncoder();
const chunk = (content: string, finish: string | null = null) =>
  JSON.stringify({ type: "chunk", id: "rl_1", data: { id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: finish ? {} : { role: "assistant", content }, finish_reason: finish, logprobs: null }] } });

function body(bytes: Uint8Array, size: number, cancelled?: (r: unknown) => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < bytes.length) c.enqueue(bytes.subarray(i, (i += size)));
      else c.close();
    },
    cancel: cancelled,
  });
}

async function all(text: string, size: number): Promise<UpstreamEvent[]> {
  const r = relayEvents(body(enc.encode(text), size), "browser:t");
  const out: UpstreamEvent[] = [];
  for (let x = await r.read(); !x.done; x = await r.read()) out.push(x.value);
  return out;
}

describe("relayEvents (the hub's answer read straight into events)", () => {
  const answer = `${chunk("Grüße ")}\n${chunk("👋 world")}\n${chunk("", "stop")}\n{"type":"done","id":"rl_1"}\n`;

  it("gives the same events however the lines are split, multi-byte characters included", async () => {
    const whole = await all(answer, answer.length * 4);
    expect(whole.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("")).toBe("Grüße 👋 world");
    expect(whole.at(-1)).toEqual({ type: "finish", reason: "stop" });
    for (const size of [1, 3, 17, 100]) expect(await all(answer, size), `reads of ${size} bytes`).toEqual(whole);
  });

  it("an answer without done or error is a broken relay", async () => {
    const out = await all(`${chunk("a")}\n`, 5);
    expect(out.at(-1)).toMatchObject({ type: "error", error: { status: 502, code: "upstream_error", message: expect.stringContaining("ended without done or error") } });
  });

  it("a line that is not JSON ends it with an error, and nothing after it counts", async () => {
    const out = await all(`${chunk("a")}\nnot json\n${chunk("b")}\n{"type":"done","id":"rl_1"}\n`, 7);
    expect(out.map((e) => e.type)).toEqual(["text", "error"]);
  });

  it("the page's error becomes the mapped error event", async () => {
    const out = await all(`{"type":"error","id":"rl_1","kind":"ContextWindowSizeExceededError","message":"too long"}\n`, 4);
    expect(out).toEqual([{ type: "error", error: expect.objectContaining({ status: 400, code: "context_length_exceeded" }) }]);
  });

  it("cancelling it cancels the hub's body", async () => {
    let reason: unknown;
    const r = relayEvents(body(enc.encode(answer), 10, (x) => (reason = x)), "browser:t");
    await r.read();
    await r.cancel("client left");
    expect(reason).toBe("client left");
    expect(await r.read()).toEqual({ done: true, value: undefined });
  });
});
