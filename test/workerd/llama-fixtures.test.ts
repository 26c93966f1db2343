import { describe, expect, it } from "vitest";
import { call, fixtureModel, readSse, text } from "./harness.ts";

// Every recorded or hand-written llama-server quirk (test/fixtures/llama/README.md), replayed through
// the whole Worker: whole, and split into 1-byte and 7-byte network chunks.
const SPLITS = ["", "/bytes-1", "/bytes-7"];
const chat = (extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

async function streamFixture(name: string, split = "", extra: Record<string, unknown> = {}) {
  const { res } = await call("/v1/chat/completions", { json: chat({ stream: true, ...extra }) }, fixtureModel(`fixture/${name}${split}`));
  return { res, ...(await readSse(res)) };
}

async function nonStreamFixture(name: string) {
  const { res } = await call("/v1/chat/completions", { json: chat() }, fixtureModel(`fixture/${name}`));
  return { res, body: (await res.json()) as any };
}

const toolCalls = (frames: Array<Record<string, any>>) => frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? []);
const finish = (frames: Array<Record<string, any>>) => frames.map((f) => f.choices?.[0]?.finish_reason).filter(Boolean);

describe.each(SPLITS)("llama-server fixtures%s", (split) => {
  it("stream-plain-text", async () => {
    const { frames, done } = await streamFixture("stream-plain-text", split, { stream_options: { include_usage: true } });
    expect(text(frames)).toBe("Hello from Switchyard!");
    expect(done).toBe(true);
    expect(finish(frames)).toEqual(["stop"]);
    expect(frames.at(-1)!.usage.total_tokens).toBeGreaterThan(0);
  });

  it("stream-non-ascii", async () => {
    const { frames, done } = await streamFixture("stream-non-ascii", split);
    expect(text(frames)).toBe("Grüße, 世界 👋");
    expect(done).toBe(true);
  });

  it("stream-logprobs: each content chunk keeps its tokens' logprobs, and the gathered answer all of them", async () => {
    const { frames, done } = await streamFixture("stream-logprobs", split, { logprobs: true, top_logprobs: 2 });
    expect(text(frames)).toBe("Hi there.");
    expect(done).toBe(true);
    const content = frames.filter((f) => f.choices?.[0]?.delta?.content);
    expect(content.length).toBeGreaterThan(1);
    for (const f of content) {
      const entries = f.choices[0].logprobs.content;
      expect(entries.map((e: any) => e.token).join("")).toBe(f.choices[0].delta.content);
      for (const e of entries) {
        expect(e.logprob).toBeLessThan(0);
        expect(e.top_logprobs).toHaveLength(2);
      }
    }
    // Chunks without content (the finish) carry none, as OpenAI's do.
    expect(frames.find((f) => f.choices?.[0]?.finish_reason)!.choices[0].logprobs).toBeNull();
    if (split === "") {
      const { body } = await nonStreamFixture("stream-logprobs");
      expect(body.choices[0].message.content).toBe("Hi there.");
      expect(body.choices[0].logprobs.content.map((e: any) => e.token).join("")).toBe("Hi there.");
      expect(body.choices[0].logprobs.content[0]).toMatchObject({ token: "Hi", bytes: [72, 105] });
    }
  });

  it("stream-length-cutoff", async () => {
    const { frames } = await streamFixture("stream-length-cutoff", split);
    expect(text(frames)).toBe("This");
    expect(finish(frames)).toEqual(["length"]);
  });

  it("stream-tool-call-literal (markup stays content without tools)", async () => {
    const { frames } = await streamFixture("stream-tool-call-literal", split);
    expect(text(frames)).toBe('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
  });

  it("stream-ping-comments", async () => {
    const { frames, done } = await streamFixture("stream-ping-comments", split);
    expect(text(frames)).toBe("Hello!");
    expect(done).toBe(true);
  });

  it("stream-reasoning-content", async () => {
    const { frames } = await streamFixture("stream-reasoning-content", split);
    expect(frames.map((f) => f.choices?.[0]?.delta?.reasoning_content ?? "").join("")).toBe("The user wants a greeting.");
    expect(text(frames)).toBe("Hello!");
  });

  it("stream-native-tool-calls", async () => {
    const { frames, done } = await streamFixture("stream-native-tool-calls", split);
    const calls = toolCalls(frames);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), function: { name: "get_weather" } });
    expect(calls.filter((c: any) => c.function?.name !== undefined)).toHaveLength(1);
    expect(calls.map((c: any) => c.function.arguments).join("")).toBe('{"city": "Paris"}');
    expect(finish(frames)).toEqual(["tool_calls"]);
    expect(done).toBe(true);
  });

  it("stream-parallel-tool-calls", async () => {
    const { frames } = await streamFixture("stream-parallel-tool-calls", split);
    const calls = toolCalls(frames);
    const args = (i: number) => calls.filter((c: any) => c.index === i).map((c: any) => c.function.arguments).join("");
    expect(JSON.parse(args(0))).toEqual({ city: "Paris" });
    expect(JSON.parse(args(1))).toEqual({ city: "Berlin" });
    const ids = calls.filter((c: any) => c.id).map((c: any) => c.id);
    expect(new Set(ids).size).toBe(2);
  });

  it("stream-tool-call-name-resent (replaced, never concatenated)", async () => {
    const { frames } = await streamFixture("stream-tool-call-name-resent", split);
    const calls = toolCalls(frames);
    expect(calls.filter((c: any) => c.function?.name !== undefined).map((c: any) => c.function.name)).toEqual(["get_weather"]);
    expect(calls.map((c: any) => c.function.arguments).join("")).toBe('{"city": "Paris"}');
  });

  it("stream-classic-tool-markup-in-content", async () => {
    const { frames, done } = await streamFixture("stream-classic-tool-markup-in-content", split);
    expect(text(frames)).toContain("<tool_call>");
    expect(done).toBe(true);
  });

  for (const name of ["stream-midstream-error-no-done", "stream-old-error-line", "stream-error-then-done"]) {
    it(`${name} → an error frame, no [DONE], no finish_reason`, async () => {
      const { res, frames, done } = await streamFixture(name, split);
      expect(res.status).toBe(200);
      expect(done).toBe(false);
      expect(finish(frames)).toEqual([]);
      expect(frames.at(-1)!.error).toMatchObject({ code: "upstream_error", type: "api_error" });
      expect(frames.filter((f) => f.error)).toHaveLength(1);
    });
  }

  it("stream-old-pregeneration-error → 400 context_length_exceeded, status kept", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ stream: true }) }, fixtureModel(`fixture/stream-old-pregeneration-error${split}`));
    expect(res.status, await res.clone().text()).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("context_length_exceeded");
  });
});

describe("llama-server JSON fixtures", () => {
  it("nonstream-plain-text (an upstream that answers with one body) is replayed as events", async () => {
    const { res, body } = await nonStreamFixture("nonstream-plain-text");
    expect(res.status).toBe(200);
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    expect(body.timings).toBeDefined();
  });

  it("nonstream-native-tool-calls: content null, call_ ids", async () => {
    const { body } = await nonStreamFixture("nonstream-native-tool-calls");
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }]);
    expect(body.choices[0].finish_reason).toBe("tool_calls");
  });

  it("an old server that cannot stream tools is asked again without streaming", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
    const { res } = await call("/v1/chat/completions", { json: chat({ stream: true, tools }) }, fixtureModel("behave/tools-no-stream"));
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    expect(toolCalls(frames)[0].function.name).toBe("get_weather");
  });

  const outcomes: Array<[string, number, string]> = [
    ["error-context-exceeded", 400, "context_length_exceeded"],
    ["error-bad-grammar", 400, "upstream_error"],
    ["error-invalid-tool-choice", 400, "upstream_error"],
    ["error-malformed-json-500", 400, "upstream_error"],
    ["error-peg-parse-500", 502, "upstream_error"],
    ["error-invalid-api-key-401", 502, "upstream_error"],
    ["loading-503", 503, "model_loading"],
  ];
  for (const [name, status, code] of outcomes) {
    it(`${name} → ${status} ${code}`, async () => {
      for (const stream of [false, true]) {
        // The status as mapped: without the admission line's wait for a loading server to come back (issue 28).
        const { res } = await call("/v1/chat/completions", { json: chat({ stream }) }, fixtureModel(`fixture/${name}`, { queue: { maxWaitMs: 0 } }));
        expect(res.status).toBe(status);
        const body = (await res.json()) as any;
        expect(body.error.code).toBe(code);
        expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
      }
    });
  }
});
