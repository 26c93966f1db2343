import { describe, expect, it } from "vitest";
import { call, configWith, fixtureModel, grammar, received } from "./harness.ts";

const ask = (extra: Record<string, unknown>) => ({ model: "any-name", max_tokens: 200, temperature: 0, messages: [{ role: "user", content: "Say something." }], ...extra });
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

    const loading = await call("/v1/messages", { json: ask({ model: "m", stream: true }) }, fixtureModel("behave/loading"));
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
