import { describe, expect, it } from "vitest";
import { TextCompletionEncoder } from "../../../src/api/completions/text-completion-encoder.ts";
import { completionChunkAsChat } from "../../../src/upstreams/llama/completion-chunk-as-chat.ts";
import { readLlamaSse } from "../llama/read-llama-sse.ts";
import type { UpstreamEvent } from "../../../src/stream/events.ts";

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
