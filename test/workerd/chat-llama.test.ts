import { describe, expect, it } from "vitest";
import { call, grammar, readSse, text } from "./harness.ts";

// Zero config against the real llama-server (tiny random-weight model, literal grammars).
const ask = (extra: Record<string, unknown>) => ({
  model: "any-name-i-like",
  messages: [{ role: "user", content: "Say something." }],
  temperature: 0,
  max_tokens: 200,
  ...extra,
});

describe("chat completions against a real llama-server", () => {
  it("non-stream: returns exactly the text, echoes the model name, names the target", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({ grammar: grammar("Hello from llama.cpp!") }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toMatch(/^llama:127\.0\.0\.1:\d+$/);
    expect(res.headers.get("x-switchyard-attempts")).toBe("1");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const body = (await res.json()) as any;
    expect(body.object).toBe("chat.completion");
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.model).toBe("any-name-i-like");
    expect(body.choices[0].message).toEqual({ role: "assistant", content: "Hello from llama.cpp!", refusal: null });
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.timings.predicted_n).toBeGreaterThan(0);
    expect(body.x_switchyard).toMatchObject({ target: res.headers.get("x-switchyard-target"), attempts: 1 });
  });

  it("stream: clean OpenAI frames, token by token, then [DONE]", async () => {
    const want = "Grüße, 世界 👋 — streaming works.";
    const { res } = await call("/v1/chat/completions", { json: ask({ stream: true, grammar: grammar(want) }) });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("x-switchyard-target")).toMatch(/^llama:/);
    const { frames, done, raw } = await readSse(res);
    expect(done, raw).toBe(true);
    expect(text(frames)).toBe(want);
    expect(frames.length).toBeGreaterThan(3);
    const ids = new Set(frames.map((f) => f.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-/);
    for (const f of frames) {
      expect(f.object).toBe("chat.completion.chunk");
      expect(f.model).toBe("any-name-i-like");
      expect(typeof f.created).toBe("number");
    }
    expect(frames[0]!.choices[0].delta.role).toBe("assistant");
    expect(frames.slice(1).every((f) => f.choices[0]?.delta?.role === undefined)).toBe(true);
    const deltas = frames.filter((f) => f.choices[0]?.delta && "content" in f.choices[0].delta);
    expect(deltas.every((f) => typeof f.choices[0].delta.content === "string")).toBe(true);
    const last = frames.at(-1)!;
    expect(last.choices[0].finish_reason).toBe("stop");
    expect(last.x_switchyard.target).toMatch(/^llama:/);
    expect(frames.some((f) => f.usage)).toBe(false);
  });

  it("stream: the usage chunk comes last when asked for", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({ stream: true, stream_options: { include_usage: true }, grammar: grammar("Count me.") }) });
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    const last = frames.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBeGreaterThan(0);
    expect(last.timings.predicted_n).toBeGreaterThan(0);
    expect(frames.at(-2)!.choices[0].finish_reason).toBe("stop");
  });

  it("max_tokens cuts the answer with finish_reason length", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({ max_tokens: 3, grammar: grammar("one two three four five six seven eight nine ten") }) });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].finish_reason).toBe("length");
    expect(body.usage.completion_tokens).toBe(3);
    expect("one two three four five six seven eight nine ten".startsWith(body.choices[0].message.content)).toBe(true);
  });

  it("tool-call markup written as text stays text without tools declared", async () => {
    const markup = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const { res } = await call("/v1/chat/completions", { json: ask({ stream: true, grammar: grammar(markup) }) });
    const { frames } = await readSse(res);
    expect(text(frames)).toBe(markup);
  });

  it("a long answer arrives whole", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const { res } = await call("/v1/chat/completions", { json: ask({ stream: true, max_tokens: 400, grammar: grammar(long) }) });
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    expect(text(frames)).toBe(long);
  });

  it("logprobs with tools, which llama-server refuses on a stream: the whole answer is asked for instead", async () => {
    // Before: the always-streamed request drew llama-server's 400 "logprobs is not supported with
    // tools + stream" even for a client that had not asked to stream. (No grammar here: llama-server
    // refuses a custom grammar with tools, so the random model writes what it writes.)
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    for (const stream of [false, true]) {
      const { res } = await call("/v1/chat/completions", { json: ask({ stream, tools, logprobs: true, max_tokens: 8 }) });
      expect(res.status, await res.clone().text()).toBe(200);
      if (stream) {
        const { frames, done } = await readSse(res);
        expect(done).toBe(true);
        expect(frames.some((f) => f.choices?.[0]?.finish_reason)).toBe(true);
      } else {
        const body = (await res.json()) as any;
        expect(body.object).toBe("chat.completion");
        expect(["stop", "length", "tool_calls"]).toContain(body.choices[0].finish_reason);
      }
    }
  });

  it("maps llama-server's own rejections (bad grammar) to a 400 envelope", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({ grammar: "root ::= \"unterminated" }) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.code).toBe("upstream_error");
    expect(body.error.message).toContain("grammar");
  });

  it("serves 20 concurrent streams correctly", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const want = `Stream number ${i} is here.`;
        const { res } = await call("/v1/chat/completions", { json: ask({ stream: true, grammar: grammar(want) }) });
        const { frames, done } = await readSse(res);
        return text(frames) === want && done;
      }),
    );
    expect(results.every(Boolean)).toBe(true);
  });

  it("lists the upstream's models in zero config", async () => {
    const { res } = await call("/v1/models");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.object).toBe("list");
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data[0]).toMatchObject({ object: "model", owned_by: "llamacpp" });
  });
});
