import { describe, expect, it } from "vitest";
import { parseLlamaSse } from "../../../src/upstreams/llama/parse-llama-sse.ts";
import { mapLlamaChunk, type ChunkState } from "../../../src/upstreams/llama/map-llama-chunk.ts";
import type { UpstreamEvent } from "../../../src/stream/events.ts";

// parseLlamaSse reads repeated token frames (same opening, same metadata tail) without parsing each
// one in full; whatever the frames hold, the events must be exactly what a full parse gives.

async function parse(frames: string[], bytes: boolean): Promise<UpstreamEvent[]> {
  const enc = new TextEncoder();
  const source = new ReadableStream<string | Uint8Array>({
    start(c) {
      for (const f of frames) c.enqueue(bytes ? enc.encode(f) : f);
      c.close();
    },
  });
  const out: UpstreamEvent[] = [];
  const reader = source.pipeThrough(parseLlamaSse("llama:test")).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

function fullParse(datas: string[]): UpstreamEvent[] {
  const state: ChunkState = {};
  return datas.flatMap((d) => mapLlamaChunk(JSON.parse(d), state, "llama:test"));
}

const tail = `}}],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}`;
const content = (literal: string, t = tail) => `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"${literal}"${t}`;
const reasoning = (literal: string, t = tail) => `{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"${literal}"${t}`;

describe("parseLlamaSse on repeated token frames", () => {
  const datas = [
    `{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","object":"chat.completion.chunk"}`,
    reasoning("think"),
    reasoning("ing"),
    reasoning("a \\\"quoted\\\" line\\n"),
    content("Hel"),
    content("lo"),
    content(""),
    content("wörld 👋"),
    content("esc\\u00e9aped"),
    content("tab\\tbed"),
    // Escapes read from the literal alone, one after another; a backslash before the closing quote.
    content("say \\\"hi\\\""),
    content("back\\\\"),
    content("\\ud83d\\udc4b"),
    // An unescaped quote turns the same bytes into a different object: must not pass as one literal.
    content('q","x":"b'),
    content('r","content":"s'),
    // The same opening with more in the tail: timings, a second delta key, another choice, usage.
    content("t1", `}}],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","object":"chat.completion.chunk","timings":{"predicted_n":3}}`),
    content("t2"),
    content("k1", `,"reasoning_content":"also"}}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}`),
    content("k2", `,"reasoning_content":"also"}}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}`),
    content("d1", `},"content":"override"}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}`),
    content("d2", `,"content":"dup"}}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}`),
    content("d3", `,"content":"dup"}}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}`),
    content("after"),
    content("more"),
    `{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","object":"chat.completion.chunk"}`,
    `{"choices":[],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":9,"prompt_tokens":3,"total_tokens":12}}`,
  ];
  const frames = [...datas.map((d) => `data: ${d}\n\n`), "data: [DONE]\n\n"];

  it("gives exactly the events of a full parse of every frame (text and bytes input)", async () => {
    const expected = fullParse(datas);
    expect(await parse(frames, false)).toEqual(expected);
    expect(await parse(frames, true)).toEqual(expected);
  });

  it("still refuses a repeated frame with a raw control character (not JSON)", async () => {
    const bad = [content("a"), content("b"), content("c\u0001d")].map((d) => `data: ${d}\n\n`);
    const out = await parse([...bad, "data: [DONE]\n\n"], true);
    expect(out.slice(0, 2)).toEqual([
      { type: "text", delta: "a" },
      { type: "text", delta: "b" },
    ]);
    expect(out[2]).toMatchObject({ type: "error", error: { status: 502, code: "upstream_error" } });
    expect(out).toHaveLength(3);
  });

  it("splits across reads anywhere (one byte at a time)", async () => {
    const enc = new TextEncoder();
    const all = enc.encode(frames.join(""));
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < all.length; i++) c.enqueue(all.subarray(i, i + 1));
        c.close();
      },
    });
    const out: UpstreamEvent[] = [];
    const reader = source.pipeThrough(parseLlamaSse("llama:test")).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
    expect(out).toEqual(fullParse(datas));
  });
});
