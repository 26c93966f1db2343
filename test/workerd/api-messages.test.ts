import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claudeCodeFirstRequest } from "../fixtures/claude-code/first-request.ts";
import { call, configWith, FIXTURE_URL, fixtureModel, grammar, LLAMA_URL, received } from "./harness.ts";

const ask = (extra: Record<string, unknown>): Record<string, any> => ({ model: "any-name", max_tokens: 200, temperature: 0, messages: [{ role: "user", content: "Say something." }], ...extra });
const anthropicHeaders = { "x-api-key": "sk-ant-client", "anthropic-version": "2023-06-01" };

async function readEvents(res: Response) {
  const raw = await res.text();
  const events: Array<{ event: string; data: any }> = [];
  for (const block of raw.split("\n\n")) {
    if (!block || block.startsWith(":")) continue;
    events.push({ event: /^event: (.*)$/m.exec(block)?.[1] ?? "", data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) });
  }
  return events;
}

describe("POST /v1/messages against a real llama-server", () => {
  it("non-stream: an Anthropic message with the exact text, end_turn, usage", async () => {
    const { res } = await call("/v1/messages", { json: ask({ grammar: grammar("Hello from messages!"), system: "Be nice." }), headers: anthropicHeaders });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ type: "message", role: "assistant", model: "any-name", stop_reason: "end_turn", stop_sequence: null, content: [{ type: "text", text: "Hello from messages!" }] });
    expect(body.id).toMatch(/^msg_/);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
  });

  it("stream: Anthropic event names, text_delta deltas add up, message_delta then message_stop", async () => {
    const want = "Streaming messages ✓";
    const { res } = await call("/v1/messages", { json: ask({ stream: true, grammar: grammar(want) }), headers: anthropicHeaders });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await readEvents(res);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const names = events.map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"]);
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(events.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join("")).toBe(want);
    expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { output_tokens: expect.any(Number) } });
  });

  it("max_tokens cuts with stop_reason max_tokens", async () => {
    const { res } = await call("/v1/messages", { json: ask({ max_tokens: 3, grammar: grammar("one two three four five six") }) });
    expect(((await res.json()) as any).stop_reason).toBe("max_tokens");
  });

  it("native tool calls become tool_use blocks; x-api-key and anthropic-version are not forwarded", async () => {
    const { res } = await call(
      "/v1/messages",
      { json: ask({ model: "m", tools: [{ name: "get_weather", input_schema: { type: "object" } }] }), headers: anthropicHeaders },
      fixtureModel("fixture/stream-native-tool-calls"),
    );
    const body = (await res.json()) as any;
    expect(body.stop_reason).toBe("tool_use");
    const tool = body.content.find((b: any) => b.type === "tool_use");
    expect(tool).toMatchObject({ id: expect.stringMatching(/^toolu_/), name: expect.any(String), input: expect.any(Object) });
    const last = (await received()).at(-1)!;
    expect(last.headers["x-api-key"]).toBeUndefined();
    expect(last.headers["anthropic-version"]).toBeUndefined();
    expect(JSON.parse(last.body).tools[0].function.name).toBe("get_weather");
  });

  it("errors in Anthropic's shape: validation 400, unknown model 404, loading 503 overloaded, mid-stream error event", async () => {
    const bad = await call("/v1/messages", { json: { model: "m", messages: [{ role: "user", content: "x" }] } });
    expect(bad.res.status).toBe(400);
    expect(await bad.res.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("max_tokens") } });

    const missing = await call("/v1/messages", { json: ask({ model: "nope" }) }, configWith({ m: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }] } }));
    expect(missing.res.status).toBe(404);
    expect(await missing.res.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });

    const loading = await call("/v1/messages", { json: ask({ model: "m", stream: true }) }, fixtureModel("behave/loading", { queue: { maxWaitMs: 0 } }));
    expect(loading.res.status).toBe(503);
    expect(loading.res.headers.get("retry-after")).toBe("5");
    expect(await loading.res.json()).toMatchObject({ type: "error", error: { type: "overloaded_error", code: "model_loading" } });

    const mid = await call("/v1/messages", { json: ask({ model: "m", stream: true }) }, fixtureModel("fixture/stream-midstream-error-no-done"));
    const events = await readEvents(mid.res);
    expect(events.at(-1)!.event).toBe("error");
    expect(events.at(-1)!.data).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(events.map((e) => e.event)).not.toContain("message_stop");
  });
});

describe("what Claude Code sends", () => {
  const claudeCodeHeaders = {
    ...anthropicHeaders,
    "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,advanced-tool-use-2025-11-20,effort-2025-11-24",
  };

  it("its first request (?beta=true, a system message inside messages, a deferred tool) streams from the real llama-server", async () => {
    // Temperature 0: sampling freely, the random-weight model writes a stray byte into about one
    // answer in twenty, which llama-server's parser then refuses; that case has tests of its own
    // (chat-parser-refusal.test.ts). This one is about the request's shape.
    const { res } = await call("/v1/messages?beta=true", { json: { ...claudeCodeFirstRequest, max_tokens: 8, temperature: 0 }, headers: claudeCodeHeaders });
    expect(res.status, await res.clone().text()).toBe(200);
    const events = await readEvents(res);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2), JSON.stringify(events.at(-1))).toEqual(["message_delta", "message_stop"]);
  });

  it("upstream: the system message stays in place, the deferred tool is left out, the Anthropic-only fields and headers are not sent", async () => {
    const { res } = await call("/v1/messages?beta=true", { json: { ...claudeCodeFirstRequest, model: "m" }, headers: claudeCodeHeaders }, fixtureModel("fixture/stream-plain-text"));
    expect(res.status).toBe(200);
    await res.text();
    const last = (await received()).at(-1)!;
    const sent = JSON.parse(last.body);
    expect(sent.messages.map((m: any) => m.role)).toEqual(["system", "user", "system"]);
    expect(sent.messages[2].content).toMatch(/^# Environment/);
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(["Bash", "ToolSearch"]);
    for (const key of ["thinking", "context_management", "output_config", "metadata", "system"]) expect(sent).not.toHaveProperty(key);
    for (const h of ["anthropic-beta", "anthropic-version", "x-api-key"]) expect(last.headers[h]).toBeUndefined();
  });

  it("thinking blocks carry a signature (a signature_delta before their stop) and go back to the model as reasoning, signed or not", async () => {
    const stream = await call("/v1/messages", { json: ask({ model: "m", stream: true }) }, fixtureModel("fixture/stream-reasoning-content"));
    const events = await readEvents(stream.res);
    const thinkingIndex = events.find((e) => e.event === "content_block_start" && e.data.content_block.type === "thinking")!.data.index;
    const ofThinking = events.filter((e) => e.data.index === thinkingIndex).map((e) => e.data.delta?.type ?? e.event);
    expect(ofThinking.slice(-2)).toEqual(["signature_delta", "content_block_stop"]);
    const signature = events.find((e) => e.data.delta?.type === "signature_delta")!.data.delta.signature;
    expect(signature).toMatch(/^sy1\./);

    const whole = await call("/v1/messages", { json: ask({ model: "m" }) }, fixtureModel("fixture/stream-reasoning-content"));
    const body = (await whole.res.json()) as any;
    expect(body.content[0]).toEqual({ type: "thinking", thinking: "The user wants a greeting.", signature });

    for (const sig of [signature, "not-a-signature"]) {
      const next = ask({
        model: "m",
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: [{ type: "thinking", thinking: "The user wants a greeting.", signature: sig }, { type: "text", text: "Hello!" }] },
          { role: "user", content: "Again" },
        ],
      });
      const again = await call("/v1/messages", { json: next }, fixtureModel("fixture/stream-plain-text"));
      expect(again.res.status).toBe(200);
      await again.res.text();
      const sent = JSON.parse((await received()).at(-1)!.body);
      expect(sent.messages[1]).toMatchObject({ role: "assistant", content: "Hello!", reasoning_content: "The user wants a greeting." });
    }
  });

  it("usage: input_tokens plus cache_read_input_tokens is the prompt, and a repeated prompt is read from llama-server's cache", async () => {
    const json = ask({ grammar: grammar("Cached."), system: "You are a careful assistant. ".repeat(20) });
    const usages = [];
    for (let i = 0; i < 2; i++) {
      const { res } = await call("/v1/messages", { json });
      usages.push(((await res.json()) as any).usage);
    }
    const count = await call("/v1/messages/count_tokens", { json: { model: json.model, system: json.system, messages: json.messages } });
    const { input_tokens: prompt } = (await count.res.json()) as any;
    for (const u of usages) {
      expect(u).toMatchObject({ input_tokens: expect.any(Number), cache_creation_input_tokens: 0, cache_read_input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
      expect(u.input_tokens + u.cache_read_input_tokens).toBe(prompt);
    }
    expect(usages[1].cache_read_input_tokens).toBeGreaterThan(0);
    expect(usages[1].input_tokens).toBeLessThan(prompt);
  });

  it("a prompt over the context: prompt is too long: N tokens > M maximum (Claude Code compacts on it); chat keeps OpenAI's wording", async () => {
    const vars = fixtureModel("fixture/error-context-exceeded");
    for (const stream of [false, true]) {
      const { res } = await call("/v1/messages", { json: ask({ model: "m", stream }) }, vars);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 631 tokens > 256 maximum", code: "context_length_exceeded" }, request_id: res.headers.get("x-request-id") });
    }
    const chat = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "x" }] } }, vars);
    expect(((await chat.res.json()) as any).error).toMatchObject({
      code: "context_length_exceeded",
      message: "This model's maximum context length is 256 tokens. However, your messages resulted in 631 tokens. Please reduce the length of the messages.",
    });
  });

  it("probes: HEAD / answers 200 with no body (the page's assets), HEAD and GET /api/hello (Claude Code's warm-up) answer 200", async () => {
    for (const method of ["HEAD", "GET"]) {
      const root = await exports.default.fetch(new Request("http://switchyard.test/", { method }));
      expect(root.status, method).toBe(200);
      if (method === "HEAD") expect(await root.text()).toBe("");
      else expect(await root.text()).toContain("<html");
    }
    const head = await exports.default.fetch(new Request("http://switchyard.test/api/hello", { method: "HEAD" }));
    expect([head.status, await head.text()]).toEqual([200, ""]);
    const get = await call("/api/hello");
    expect([get.res.status, await get.res.json()]).toEqual([200, { status: "ok" }]);
  });
});

describe("POST /v1/messages/count_tokens", () => {
  const system = "Be brief.";
  const messages = [{ role: "user", content: "What is the weather in Paris?" }];
  const weather = { name: "get_weather", description: "Current weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

  async function llamaCount(body: Record<string, unknown>) {
    const prompt = ((await (await fetch(`${LLAMA_URL}/apply-template`, { method: "POST", body: JSON.stringify(body) })).json()) as any).prompt as string;
    const tokens = ((await (await fetch(`${LLAMA_URL}/tokenize`, { method: "POST", body: JSON.stringify({ content: prompt, add_special: true }) })).json()) as any).tokens;
    return tokens.length as number;
  }

  it("is llama-server's own count of the rendered prompt (no max_tokens needed); a tool adds to it", async () => {
    const plain = await call("/v1/messages/count_tokens?beta=true", { json: { model: "any-name", system, messages }, headers: anthropicHeaders });
    expect(plain.res.status).toBe(200);
    expect(plain.res.headers.get("x-switchyard-estimate")).toBeNull();
    const n = ((await plain.res.json()) as any).input_tokens;
    expect(n).toBe(await llamaCount({ messages: [{ role: "system", content: system }, ...messages] }));

    const withTool = await call("/v1/messages/count_tokens", { json: { model: "any-name", system, messages, tools: [weather] } });
    const m = ((await withTool.res.json()) as any).input_tokens;
    expect(m).toBeGreaterThan(n);
    const tools = [{ type: "function", function: { name: weather.name, description: weather.description, parameters: weather.input_schema } }];
    expect(m).toBe(await llamaCount({ messages: [{ role: "system", content: system }, ...messages], tools }));

    const deferred = await call("/v1/messages/count_tokens", { json: { model: "any-name", system, messages, tools: [{ ...weather, defer_loading: true }] } });
    expect(((await deferred.res.json()) as any).input_tokens).toBe(n);
  });

  it("a browser target or an unreachable server gives the estimate, marked x-switchyard-estimate: 1", async () => {
    const estimate = Math.ceil(JSON.stringify([{ role: "system", content: system }, ...messages]).length / 4);
    for (const target of [{ kind: "browser", model: "x" }, { kind: "llama", url: "http://127.0.0.1:9" }]) {
      const { res } = await call("/v1/messages/count_tokens", { json: { model: "m", system, messages } }, configWith({ m: { targets: [target] } }));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-switchyard-estimate")).toBe("1");
      expect(await res.json()).toEqual({ input_tokens: estimate });
    }
  });

  it("errors in Anthropic's shape: validation 400, unknown model 404", async () => {
    const bad = await call("/v1/messages/count_tokens", { json: { model: "m", messages: [{ role: "tool", content: "x" }] } });
    expect(bad.res.status).toBe(400);
    expect(await bad.res.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const missing = await call("/v1/messages/count_tokens", { json: { model: "nope", messages } }, configWith({ m: { targets: [{ kind: "llama", url: LLAMA_URL }] } }));
    expect(missing.res.status).toBe(404);
    expect(await missing.res.json()).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_not_found" } });
  });
});

describe("a template that allows a system message only first", () => {
  it("Claude Code's late system message is folded into the leading one, and the answer streams", async () => {
    const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/system-first-template/${encodeURIComponent("Folded in.")}` }] } });
    const body = {
      model: "m",
      max_tokens: 64,
      stream: true,
      system: [{ type: "text", text: "You are an agent." }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Write hello.txt" }] },
        { role: "system", content: [{ type: "text", text: "# Environment\ncwd: /tmp" }] },
      ],
    };
    const { res } = await call("/v1/messages?beta=true", { json: body, headers: { "anthropic-version": "2023-06-01" } }, vars);
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    const text = raw
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)))
      .map((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : ""))
      .join("");
    expect(text).toBe("Folded in.");
    const tries = (await received()).filter((r) => r.path.includes("system-first-template")).slice(-2).map((r) => JSON.parse(r.body).messages);
    expect(tries[0].map((m: any) => m.role)).toEqual(["system", "user", "system"]);
    expect(tries[1]).toEqual([
      { role: "system", content: "You are an agent.\n\n# Environment\ncwd: /tmp" },
      { role: "user", content: "Write hello.txt" },
    ]);
  });
});
