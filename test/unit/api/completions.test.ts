import { describe, expect, it } from "vitest";
import { appendLegacyLogprobs, emptyLegacyLogprobs } from "../../../src/api/completions/legacy-logprobs.ts";
import { TextCompletionEncoder } from "../../../src/api/completions/text-completion-encoder.ts";
import { adaptCompletionForWebLlm } from "../../../src/upstreams/browser/browser-completions-upstream.ts";
import { completionChunkAsChat } from "../../../src/upstreams/wire/completion-chunk-as-chat.ts";
import { readLlamaSse } from "../upstreams/llama/read-llama-sse.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";

const ext = () => ({ target: "llama:h:1", attempts: 1 });

async function parse(text: string, step: number): Promise<UpstreamEvent[]> {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += step) pieces.push(text.slice(i, i + step));
  return readLlamaSse(pieces, "llama:h:1", completionChunkAsChat);
}

const chunk = (text: string, finish: string | null = null, extra = {}) =>
  `data: ${JSON.stringify({ choices: [{ text, index: 0, logprobs: null, finish_reason: finish }], object: "text_completion", ...extra })}\n\n`;

describe("completion SSE through the chat parser", () => {
  const sse = chunk("Hel") + chunk("lo ✓") + chunk("", "length", { usage: { prompt_tokens: 2, completion_tokens: 3 }, timings: { predicted_n: 3 } }) + "data: [DONE]\n\n";

  it("text_completion chunks become text, finish and usage events, whole or split into 3-character pieces", async () => {
    for (const step of [sse.length, 3]) {
      expect(await parse(sse, step)).toEqual([
        { type: "text", delta: "Hel" },
        { type: "text", delta: "lo ✓" },
        { type: "finish", reason: "length" },
        { type: "usage", usage: { promptTokens: 2, completionTokens: 3 }, timings: { predicted_n: 3 } },
      ]);
    }
  });

  it("keeps the failure contract: an in-stream error and an unfinished stream are errors", async () => {
    const err = await parse(chunk("a") + 'data: {"error":{"code":500,"message":"boom","type":"server_error"}}\n\n', 5);
    expect(err.at(-1)).toMatchObject({ type: "error", error: { code: "upstream_error" } });
    const cut = await parse(chunk("a"), 7);
    expect(cut.at(-1)).toMatchObject({ type: "error", error: { message: expect.stringContaining("before the answer was finished") } });
  });

  it("leaves other lines and chunks alone", async () => {
    // Keep-alive comments and [DONE] are the SSE parser's; a chunk without choices passes as it is.
    expect(await parse(`: ping\n\n${sse}`, 4)).toEqual(await parse(sse, sse.length));
    const error = { error: { message: "x" } };
    expect(completionChunkAsChat(error)).toBe(error);
  });
});

describe("TextCompletionEncoder", () => {
  it("one text_completion chunk per delta, finish with x_switchyard and timings, usage chunk when asked", () => {
    const enc = new TextCompletionEncoder({ id: "cmpl-1", created: 1, model: "m", includeUsage: true }, ext);
    const out = [
      ...enc.encode({ type: "text", delta: "Hi" }),
      ...enc.encode({ type: "finish", reason: "stop" }),
      ...enc.encode({ type: "usage", usage: { promptTokens: 1, completionTokens: 1 }, timings: { predicted_n: 1 } }),
      ...enc.end(),
    ] as any[];
    expect(out[0]).toEqual({ id: "cmpl-1", object: "text_completion", created: 1, model: "m", choices: [{ text: "Hi", index: 0, logprobs: null, finish_reason: null }] });
    expect(out[1]).toMatchObject({ choices: [{ text: "", finish_reason: "stop" }], x_switchyard: { target: "llama:h:1" }, timings: { predicted_n: 1 } });
    expect(out[2]).toMatchObject({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    expect(enc.completion()).toMatchObject({ object: "text_completion", choices: [{ text: "Hi", finish_reason: "stop" }], usage: { total_tokens: 2 } });
  });
});

/** An entry as llama-server gives it, with ranked alternatives (the sampled token first here). */
const entry = (token: string, logprob: number, ...others: Array<[string, number]>) => ({
  id: 1,
  token,
  bytes: [...new TextEncoder().encode(token)],
  logprob,
  top_logprobs: [{ id: 1, token, logprob }, ...others.map(([t, l]) => ({ id: 2, token: t, logprob: l }))],
});

describe("logprobs on text completions (OpenAI's legacy shape)", () => {
  it("entries become tokens, token_logprobs, top_logprobs (N of them) and character offsets from the completion's start", () => {
    const into = emptyLegacyLogprobs();
    // "😀" is two UTF-16 units and one character; "__proto__" must stay an own key.
    const end = appendLegacyLogprobs(into, [entry("😀", -1, ["a", -2], ["b", -3]), entry(" x", -0.5, ["__proto__", -4]), { token: 7 }, entry("é", -0.25)], 0, 2);
    expect(into).toEqual({
      tokens: ["😀", " x", "é"],
      token_logprobs: [-1, -0.5, -0.25],
      top_logprobs: [{ "😀": -1, a: -2 }, JSON.parse('{" x": -0.5, "__proto__": -4}'), { é: -0.25 }],
      text_offset: [0, 1, 3],
    });
    expect(Object.keys(into.top_logprobs[1]!)).toEqual([" x", "__proto__"]);
    expect(end).toBe(4);
    const none = emptyLegacyLogprobs();
    appendLegacyLogprobs(none, [entry("a", -1, ["b", -2])], 10, 0);
    expect(none).toEqual({ tokens: ["a"], token_logprobs: [-1], top_logprobs: [{}], text_offset: [10] });
  });

  it("llama-server's completion chunks keep their entries through the chat parser", async () => {
    const lp = { content: [entry("Hel", -1)] };
    const sse = `data: ${JSON.stringify({ choices: [{ text: "Hel", index: 0, logprobs: lp, finish_reason: null }], object: "text_completion" })}\n\n` + chunk("", "stop") + "data: [DONE]\n\n";
    for (const step of [sse.length, 5]) expect((await parse(sse, step))[0]).toEqual({ type: "text", delta: "Hel", logprobs: lp.content });
  });

  it("the encoder puts each chunk's tokens on it (null on chunks without) and all of them in the body", () => {
    const enc = new TextCompletionEncoder({ id: "cmpl-1", created: 1, model: "m", includeUsage: false, logprobs: 1 }, ext);
    const out = [
      ...enc.encode({ type: "text", delta: "Hi", logprobs: [entry("Hi", -1, ["Ho", -2])] }),
      ...enc.encode({ type: "text", delta: " you", logprobs: [entry(" y", -0.5), entry("ou", -0.1)] }),
      ...enc.encode({ type: "text", delta: "!" }),
      ...enc.encode({ type: "finish", reason: "stop" }),
      ...enc.end(),
    ] as any[];
    expect(out[0].choices[0].logprobs).toEqual({ tokens: ["Hi"], token_logprobs: [-1], top_logprobs: [{ Hi: -1 }], text_offset: [0] });
    expect(out[1].choices[0].logprobs).toEqual({ tokens: [" y", "ou"], token_logprobs: [-0.5, -0.1], top_logprobs: [{ " y": -0.5 }, { ou: -0.1 }], text_offset: [2, 4] });
    expect(out[2].choices[0].logprobs).toBeNull();
    expect(out[3].choices[0].logprobs).toBeNull();
    expect((enc.completion() as any).choices[0].logprobs).toEqual({
      tokens: ["Hi", " y", "ou"],
      token_logprobs: [-1, -0.5, -0.1],
      top_logprobs: [{ Hi: -1 }, { " y": -0.5 }, { ou: -0.1 }],
      text_offset: [0, 2, 4],
    });
    // Not asked: null everywhere, entries or not.
    const plain = new TextCompletionEncoder({ id: "cmpl-2", created: 1, model: "m", includeUsage: false }, ext);
    expect((plain.encode({ type: "text", delta: "Hi", logprobs: [entry("Hi", -1)] })[0] as any).choices[0].logprobs).toBeNull();
    plain.end();
    expect((plain.completion() as any).choices[0].logprobs).toBeNull();
  });

  it("a browser session is asked in web-llm's terms: logprobs true and top_logprobs N", () => {
    expect(adaptCompletionForWebLlm({ model: "x", prompt: "p", logprobs: 3 }, "m")).toMatchObject({ logprobs: true, top_logprobs: 3 });
    expect(adaptCompletionForWebLlm({ model: "x", prompt: "p", logprobs: 0 }, "m")).toMatchObject({ logprobs: true, top_logprobs: 0 });
    const none = adaptCompletionForWebLlm({ model: "x", prompt: "p", logprobs: null }, "m");
    expect("logprobs" in none || "top_logprobs" in none).toBe(false);
  });
});
