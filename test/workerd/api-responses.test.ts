import { describe, expect, it } from "vitest";
import { codexFirstRequest } from "../fixtures/codex/first-request.ts";
import { call, fixtureModel, grammar, received } from "./harness.ts";

const ask = (extra: Record<string, unknown>) => ({ model: "any-name", input: "Say something.", temperature: 0, max_output_tokens: 200, ...extra });

/** `event:`/`data:` SSE blocks → [{event, data}]. */
async function readEvents(res: Response) {
  const raw = await res.text();
  const events: Array<{ event: string; data: any }> = [];
  for (const block of raw.split("\n\n")) {
    if (!block || block.startsWith(":")) continue;
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
    const data = /^data: (.*)$/m.exec(block)?.[1];
    events.push({ event, data: data ? JSON.parse(data) : null });
  }
  return { events, raw };
}

describe("POST /v1/responses against a real llama-server", () => {
  it("non-stream: one message item with the exact text, usage, the requested model", async () => {
    const { res } = await call("/v1/responses", { json: ask({ grammar: grammar("Hello from responses!"), instructions: "Be nice." }) });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toMatch(/^llama:/);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "any-name", instructions: "Be nice.", store: true, error: null });
    expect(body.id).toMatch(/^resp_/);
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello from responses!" }] });
    expect(body.usage.output_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    expect(body.x_switchyard.attempts).toBe(1);
  });

  it("stream: named events in order, deltas add up, completed last, no [DONE]", async () => {
    const want = "Streaming responses: ünïcödé ✓";
    const { res } = await call("/v1/responses", { json: ask({ stream: true, grammar: grammar(want) }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events, raw } = await readEvents(res);
    expect(raw).not.toContain("[DONE]");
    for (const e of events) expect(e.data.type).toBe(e.event);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const names = events.map((e) => e.event);
    expect(names.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    expect(names.at(-1)).toBe("response.completed");
    const text = events.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta).join("");
    expect(text).toBe(want);
    const done = events.find((e) => e.event === "response.output_text.done")!;
    expect(done.data.text).toBe(want);
    const completed = events.at(-1)!.data.response;
    expect(completed.output[0].content[0].text).toBe(want);
    expect(completed.usage.output_tokens).toBeGreaterThan(0);
  });

  it("max_output_tokens cuts the answer: status incomplete, reason max_output_tokens", async () => {
    const { res } = await call("/v1/responses", { json: ask({ max_output_tokens: 3, grammar: grammar("one two three four five six seven") }) });
    const body = (await res.json()) as any;
    expect(body.status).toBe("incomplete");
    expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("function calls from a native tool-call stream become function_call items", async () => {
    const { res } = await call("/v1/responses", { json: ask({ model: "m", stream: true, tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }] }) }, fixtureModel("fixture/stream-native-tool-calls"));
    const { events } = await readEvents(res);
    const added = events.filter((e) => e.event === "response.output_item.added" && e.data.item.type === "function_call");
    expect(added).toHaveLength(1);
    const done = events.find((e) => e.event === "response.function_call_arguments.done")!;
    const deltas = events.filter((e) => e.event === "response.function_call_arguments.delta").map((e) => e.data.delta).join("");
    expect(deltas).toBe(done.data.arguments);
    expect(JSON.parse(done.data.arguments)).toBeTypeOf("object");
    const completed = events.at(-1)!;
    expect(completed.event).toBe("response.completed");
    const item = completed.data.response.output.find((i: any) => i.type === "function_call");
    expect(item).toMatchObject({ status: "completed", name: added[0]!.data.item.name, call_id: expect.stringMatching(/^call_/) });
  });

  it("the agent loop: function_call + function_call_output reach llama-server as tool_calls and a tool message", async () => {
    const { res } = await call("/v1/responses", {
      json: ask({
        grammar: grammar("It is sunny in Paris."),
        input: [
          { role: "user", content: "Weather in Paris?" },
          { type: "function_call", call_id: "call_abc", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "function_call_output", call_id: "call_abc", output: '{"sky":"sunny"}' },
        ],
      }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.output[0].content[0].text).toBe("It is sunny in Paris.");
  });

  it("a mid-stream failure ends with response.failed and an error event", async () => {
    const { res } = await call("/v1/responses", { json: ask({ model: "m", stream: true }) }, fixtureModel("fixture/stream-midstream-error-no-done"));
    const { events } = await readEvents(res);
    const names = events.map((e) => e.event);
    expect(names.slice(-2)).toEqual(["response.failed", "error"]);
    expect(names).not.toContain("response.completed");
    expect(events.at(-2)!.data.response).toMatchObject({ status: "failed", error: { code: expect.any(String) } });
  });

  it("errors before anything is sent keep the OpenAI envelope and status", async () => {
    const bad = await call("/v1/responses", { json: { model: "m" } });
    expect(bad.res.status).toBe(400);
    expect(((await bad.res.json()) as any).error).toMatchObject({ code: "missing_required_parameter", param: "input" });
    const prev = await call("/v1/responses", { json: ask({ previous_response_id: "resp_x" }) });
    expect(prev.res.status).toBe(400);
    expect(((await prev.res.json()) as any).error).toMatchObject({ code: "previous_response_not_found", param: "previous_response_id" });
    const loading = await call("/v1/responses", { json: ask({ model: "m", stream: true }) }, fixtureModel("behave/loading", { queue: { maxWaitMs: 0 } }));
    expect(loading.res.status).toBe(503);
    expect(((await loading.res.json()) as any).error.code).toBe("model_loading");
  });
});

describe("POST /v1/responses: what coding agents send (fixture upstream)", () => {
  // What llama-server was sent for the request with this x-request-id (Switchyard's own, the response's too).
  const sentFor = async (res: Response) => JSON.parse((await received()).filter((r) => r.headers["x-request-id"] === res.headers.get("x-request-id")).at(-1)!.body);

  it("Codex CLI 0.171.0's first request (recorded): accepted, the namespace flattened, web_search dropped and reported", async () => {
    const { res } = await call("/v1/responses", { json: { ...structuredClone(codexFirstRequest), model: "m" } }, fixtureModel("fixture/stream-native-tool-calls"));
    expect(res.status).toBe(200);
    const { events } = await readEvents(res);
    const completed = events.at(-1)!;
    expect(completed.event).toBe("response.completed");
    expect(completed.data.response.x_switchyard.dropped_tools).toEqual([{ index: 8, type: "web_search" }]);
    expect(completed.data.response.tools).toEqual(codexFirstRequest.tools);
    expect(completed.data.response.store).toBe(false);
    const sent = await sentFor(res);
    expect(sent.tools.map((t: any) => t.function.name)).toEqual([
      "exec_command", "write_stdin", "request_user_input", "view_image",
      "close_agent", "resume_agent", "send_input", "spawn_agent", "wait_agent",
      "get_goal", "create_goal", "update_goal",
    ]);
    expect(sent.messages.map((m: any) => m.role)).toEqual(["system", "system", "user", "user"]);
    for (const key of ["client_metadata", "prompt_cache_key", "include", "reasoning", "store", "input"]) expect(sent, key).not.toHaveProperty(key);
  });

  it("reasoning sealed into encrypted_content comes back as reasoning_content on the next stateless turn", async () => {
    const first = await call("/v1/responses", { json: ask({ model: "m", store: false, include: ["reasoning.encrypted_content"] }) }, fixtureModel("fixture/stream-reasoning-content"));
    const body = (await first.res.json()) as any;
    expect(first.res.status, JSON.stringify(body)).toBe(200);
    const [reasoning, message] = body.output;
    expect(reasoning).toMatchObject({ type: "reasoning", summary: [], encrypted_content: expect.stringMatching(/^sy1\./) });
    const next = await call(
      "/v1/responses",
      {
        json: ask({
          model: "m",
          store: false,
          include: ["reasoning.encrypted_content"],
          input: [{ role: "user", content: "Greet me." }, { ...reasoning, content: undefined }, message, { role: "user", content: "Again." }],
        }),
      },
      fixtureModel("fixture/stream-plain-text"),
    );
    expect(next.res.status).toBe(200);
    await next.res.text();
    const sent = await sentFor(next.res);
    expect(sent.messages[1]).toMatchObject({ role: "assistant", content: "Hello!", reasoning_content: "The user wants a greeting." });
  });

  it("calls of namespaced and custom tools come back as their own items", async () => {
    const params = { type: "object", properties: { city: { type: "string" } } };
    const namespaced = await call(
      "/v1/responses",
      { json: ask({ model: "m", tools: [{ type: "namespace", name: "wx", description: "Weather.", tools: [{ type: "function", name: "get_weather", parameters: params }] }] }) },
      fixtureModel("fixture/stream-native-tool-calls"),
    );
    const item = ((await namespaced.res.json()) as any).output.find((i: any) => i.type === "function_call");
    expect(item).toMatchObject({ name: "get_weather", namespace: "wx", call_id: expect.stringMatching(/^call_/) });

    const custom = await call("/v1/responses", { json: ask({ model: "m", stream: true, tools: [{ type: "custom", name: "get_weather" }] }) }, fixtureModel("fixture/stream-native-tool-calls"));
    const { events } = await readEvents(custom.res);
    const names = events.map((e) => e.event);
    expect(names).toContain("response.custom_tool_call_input.delta");
    const done = events.find((e) => e.event === "response.custom_tool_call_input.done")!;
    expect(JSON.parse(done.data.input)).toEqual({ city: "Paris" });
    expect(events.at(-1)!.data.response.output).toContainEqual(expect.objectContaining({ type: "custom_tool_call", name: "get_weather", input: done.data.input }));
  });
});
