import { describe, expect, it } from "vitest";
import { readLlamaSse } from "./read-llama-sse.ts";
import { mapLlamaChunk } from "../../../../src/upstreams/llama/map-llama-chunk.ts";
import type { ChatChunkState } from "../../../../src/upstreams/wire/map-chat-chunk.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";

// llamaSseReader reads repeated token frames (same opening, same metadata tail) without parsing each
// one in full; whatever the frames hold, the events must be exactly what a full parse gives.

async function parse(frames: string[], bytes: boolean): Promise<UpstreamEvent[]> {
  const enc = new TextEncoder();
  return readLlamaSse(frames.map((f) => (bytes ? enc.encode(f) : f)));
}

/** The body read `size` bytes at a time. */
function parseReads(all: Uint8Array, size: number): Promise<UpstreamEvent[]> {
  const reads: Uint8Array[] = [];
  for (let i = 0; i < all.length; i += size) reads.push(all.subarray(i, i + size));
  return parseChunks(reads);
}

async function parseChunks(reads: Uint8Array[]): Promise<UpstreamEvent[]> {
  return readLlamaSse(reads);
}

function fullParse(datas: string[]): UpstreamEvent[] {
  const state: ChatChunkState = {};
  return datas.flatMap((d) => mapLlamaChunk(JSON.parse(d), state, "llama:test"));
}

const tail = `}}],"created":1796026036,"id":"chatcmpl-5weJ","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}`;
const content = (literal: string, t = tail) => `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"${literal}"${t}`;
const reasoning = (literal: string, t = tail) => `{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"${literal}"${t}`;

describe("llamaSseReader on repeated token frames", () => {
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
    const all = new TextEncoder().encode(frames.join(""));
    expect(await parseReads(all, 1)).toEqual(fullParse(datas));
  });

  // Frames read from their raw bytes (several to a read, or a read ending inside a frame) must give
  // what the frame-by-frame text path gives.
  it("reads many frames per read, and reads that end inside a frame, the same way", async () => {
    const enc = new TextEncoder();
    const expected = fullParse(datas);
    // Whole frames, k to a read: after the first learned frame every read starts between frames.
    for (const k of [1, 2, 3, 5, frames.length]) {
      const reads: Uint8Array[] = [];
      for (let i = 0; i < frames.length; i += k) reads.push(enc.encode(frames.slice(i, i + k).join("")));
      expect(await parseChunks(reads), `${k} frames a read`).toEqual(expected);
    }
    // Reads that end inside a frame (the rest of it starts the next read), at several cut points.
    for (const cut of [1, 40, 70, 100]) {
      const reads: Uint8Array[] = [];
      let carry = "";
      for (let i = 0; i < frames.length; i += 2) {
        const two = carry + frames.slice(i, i + 2).join("");
        const next = frames[i + 2] ?? "";
        const at = Math.min(cut, next.length);
        reads.push(enc.encode(two + next.slice(0, at)));
        carry = next.slice(at);
        if (next) i++;
      }
      if (carry) reads.push(enc.encode(carry));
      expect(await parseChunks(reads), `cut at ${cut}`).toEqual(expected);
    }
    const all = enc.encode(frames.join(""));
    for (const size of [all.length, 300, 64, 7]) expect(await parseReads(all, size), `reads of ${size} bytes`).toEqual(expected);
  });

  it("reads a literal with invalid UTF-8 as the text path does", async () => {
    const enc = new TextEncoder();
    const head = enc.encode(`data: ${content("")}`.slice(0, -tail.length - 1));
    const rest = enc.encode(`"${tail}\n\n`);
    const bad = new Uint8Array([...head, 0x61, 0xff, 0xe2, 0x82, ...rest]);
    const body = new Uint8Array([...enc.encode(`data: ${content("a")}\n\n`), ...bad, ...bad, ...enc.encode("data: [DONE]\n\n")]);
    const whole = await parseReads(body, body.length);
    expect(whole).toEqual(await parseReads(body, 1));
    expect(whole.slice(0, 3)).toEqual([
      { type: "text", delta: "a" },
      { type: "text", delta: "a\ufffd\ufffd" },
      { type: "text", delta: "a\ufffd\ufffd" },
    ]);
  });
});

describe("llamaSseReader on frames with logprobs", () => {
  // The same token twice with the same entry: the second frame's tail repeats the first's byte for
  // byte, so a learned frame would read it from its literal alone and lose its logprobs.
  const lp = `},"logprobs":{"content":[{"id":13,"token":"ha","bytes":[104,97],"logprob":-0.5,"top_logprobs":[]}]}}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}`;
  const finishData = `{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}`;
  const datas = [content("ha", lp), content("ha", lp), content("ha", lp), content("!"), content("!"), finishData];
  const frames = datas.map((d) => `data: ${d}\n\n`);

  for (const bytes of [false, true]) {
    it(`keeps every frame's logprobs (${bytes ? "bytes" : "text"})`, async () => {
      const events = await parse(frames, bytes);
      expect(events).toEqual(fullParse(datas));
      expect(events.filter((e) => e.type === "text" && e.logprobs)).toHaveLength(3);
      expect(events[1]).toEqual({ type: "text", delta: "ha", logprobs: [{ id: 13, token: "ha", bytes: [104, 97], logprob: -0.5, top_logprobs: [] }] });
    });
  }

  it("keeps them when all frames arrive in one read", async () => {
    const events = await parseChunks([new TextEncoder().encode(frames.join("") + "data: [DONE]\n\n")]);
    expect(events.filter((e) => e.type === "text" && e.logprobs)).toHaveLength(3);
  });
});
