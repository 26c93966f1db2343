/// <reference types="vite/client" />
// The recorded-from-source streams of vLLM and Ollama (test/fixtures/openai-compatible) read into
// events, whole and cut anywhere; and the folder's metadata convention.
import { describe, expect, it } from "vitest";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { completionChunkAsChat } from "../../../../src/upstreams/wire/completion-chunk-as-chat.ts";
import { readOpenAiSse, splitBytes } from "./read-openai-sse.ts";

interface Meta {
  name: string;
  body: string;
  status: number;
  content_type: string;
  reproduces: string;
  source: string;
  request: { path: string };
}

const metas = Object.values(
  import.meta.glob<Meta>(["../../../fixtures/openai-compatible/*.json", "!../../../fixtures/openai-compatible/*.body.json"], { eager: true, import: "default" }),
);
const bodies = import.meta.glob<string>(["../../../fixtures/openai-compatible/*.sse", "../../../fixtures/openai-compatible/*.body.json"], { eager: true, query: "?raw", import: "default" });
const bodyOf = (file: string) => bodies[`../../../fixtures/openai-compatible/${file}`];

describe("test/fixtures/openai-compatible", () => {
  it("every meta names its body, a status, a content type, the quirk and where the shape comes from", () => {
    expect(metas.length).toBeGreaterThanOrEqual(10);
    for (const m of metas) {
      expect(bodyOf(m.body), m.body).toBeTypeOf("string");
      expect(m.status).toBeTypeOf("number");
      expect(m.content_type).toMatch(/^(text\/event-stream|application\/json)/);
      expect(m.source).toMatch(/^hand-written from (vllm-project\/vllm|ollama\/ollama) /);
      expect(m.reproduces.length).toBeGreaterThan(20);
    }
  });
});

const usage = (promptTokens: number, completionTokens: number): UpstreamEvent => ({ type: "usage", usage: { promptTokens, completionTokens } });

const EXPECTED: Record<string, UpstreamEvent[]> = {
  "vllm-stream-reasoning-tool-call": [
    { type: "reasoning", delta: "The user" },
    { type: "reasoning", delta: " wants the weather" },
    { type: "reasoning", delta: " in Paris." },
    { type: "toolCall", index: 0, id: "chatcmpl-tool-5c0d8e2f9a7b4c61", name: "get_weather", argumentsDelta: "" },
    { type: "toolCall", index: 0, argumentsDelta: '{"city": "' },
    { type: "toolCall", index: 0, argumentsDelta: "Paris" },
    { type: "toolCall", index: 0, argumentsDelta: '"}' },
    { type: "finish", reason: "tool_calls" },
    usage(182, 41),
  ],
  "vllm-stream-no-stream-options": [
    { type: "text", delta: "Hello" },
    { type: "text", delta: " there!" },
    { type: "finish", reason: "stop" },
  ],
  "vllm-legacy-stream-reasoning-content": [
    { type: "reasoning", delta: "Compare" },
    { type: "reasoning", delta: " the decimals." },
    { type: "text", delta: "9.8" },
    { type: "text", delta: " is greater." },
    { type: "finish", reason: "stop" },
    usage(12, 9),
  ],
  "ollama-stream-thinking-tool-call": [
    { type: "reasoning", delta: "Okay, " },
    { type: "reasoning", delta: "the user asks about Paris." },
    { type: "toolCall", index: 0, id: "call_k2m9q4xz", name: "get_weather", argumentsDelta: '{"city":"Paris"}' },
    { type: "finish", reason: "tool_calls" },
    usage(143, 58),
  ],
  "ollama-stream-completions-usage": [{ type: "text", delta: " a" }, { type: "text", delta: " time" }, { type: "finish", reason: "stop" }, usage(3, 2)],
};

describe("SSE fixtures → events", () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: the same events whole and cut every 1, 5 or 64 bytes`, () => {
      const meta = metas.find((m) => m.name === name)!;
      const text = bodyOf(meta.body)!;
      const asChat = meta.request.path === "/v1/completions" ? { asChat: completionChunkAsChat } : {};
      expect(readOpenAiSse([text], asChat)).toEqual(expected);
      for (const size of [1, 5, 64]) expect(readOpenAiSse(splitBytes(text, size), asChat)).toEqual(expected);
    });
  }

  it("vllm-stream-midstream-error: the text, then one retryable error; [DONE] after it adds nothing", () => {
    const meta = metas.find((m) => m.name === "vllm-stream-midstream-error")!;
    const events = readOpenAiSse([bodyOf(meta.body)!]);
    expect(events.slice(0, 1)).toEqual([{ type: "text", delta: "Hel" }]);
    expect(events).toHaveLength(2);
    const err = events[1]!;
    expect(err.type).toBe("error");
    if (err.type === "error") {
      expect(err.error).toMatchObject({ status: 502, code: "upstream_error", retryable: true });
      expect(err.error.message).toContain("EngineCore encountered an issue");
    }
  });
});
