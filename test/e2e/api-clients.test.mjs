// End to end: /v1/responses, /v1/messages, /v1/completions and /v1/embeddings through the launcher +
// `wrangler dev`, driven by the real clients: the official `openai` client, the AI SDK's default
// OpenAI provider (which speaks the Responses API) and the official Anthropic client.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { startLlamaServer } from "../support/llama-server.mjs";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let embedder;
/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let openai;
/** @type {Anthropic} */
let anthropic;

/**
 * `body` with llama-server's `grammar` for exactly `text` (Switchyard passes it through; the SDKs'
 * request types do not declare it).
 * @template {import("openai/resources/responses/responses").ResponseCreateParams | import("openai/resources/completions").CompletionCreateParams | import("@anthropic-ai/sdk/resources/messages").MessageCreateParams} T
 * @param {T} body
 * @param {string} text
 * @returns {T}
 */
const literally = (body, text) => ({ ...body, grammar: grammar(text) });

/**
 * @typedef {import("openai/resources/responses/responses").FunctionTool} FunctionTool
 * @typedef {import("openai/resources/responses/responses").ResponseFunctionToolCall} ResponseFunctionToolCall
 * @typedef {import("openai/resources/responses/responses").Response & { store?: boolean }} StoredResponse `store` is part of the API; the SDK's type leaves it out
 * @typedef {import("@anthropic-ai/sdk/resources/messages").TextBlock} TextBlock
 * @typedef {import("@anthropic-ai/sdk/resources/messages").ToolUseBlock} ToolUseBlock
 */

/** @param {import("@anthropic-ai/sdk/resources/messages").ContentBlock | undefined} block the text block the test expects */
const textOf = (block) => /** @type {TextBlock} */ (block).text;

before(async () => {
  [llama, embedder, fixtures] = await Promise.all([
    startLlamaServer({ parallel: 2, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1", "--embeddings", "--pooling", "mean"] }),
    startFixtureUpstream(),
  ]);
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          tiny: { targets: [{ kind: "llama", url: llama.url }] },
          embed: { targets: [{ kind: "browser", model: "none" }, { kind: "llama", url: embedder.url }] },
          tools: { targets: [{ kind: "llama", url: `${fixtures.url}/fixture/stream-native-tool-calls` }] },
          endless: { targets: [{ kind: "llama", url: `${fixtures.url}/behave/endless` }] },
        },
      },
    },
  });
  openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "not-needed-in-dev", maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: proxy.url, apiKey: "not-needed-in-dev", maxRetries: 0 });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([llama?.stop(), embedder?.stop(), fixtures?.close()]);
});

/**
 * The tool as a client may declare it: without `strict`, which the SDK's type requires.
 * @type {Omit<FunctionTool, "strict">}
 */
const weatherTool = { type: "function", name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

describe("openai client: responses.create", () => {
  it("non-stream: output_text is the exact text, usage counted", async () => {
    const res = await openai.responses.create(literally({ model: "tiny", input: "Say it.", instructions: "Be brief.", max_output_tokens: 100, temperature: 0 }, "Responses end to end."));
    assert.equal(res.object, "response");
    assert.equal(res.status, "completed");
    assert.equal(res.output_text, "Responses end to end.");
    assert.equal(res.model, "tiny");
    assert.ok((res.usage?.output_tokens ?? 0) > 0);
  });

  it("stream: text deltas add up, the stream ends with response.completed", async () => {
    const want = "Streaming the Responses API ✓";
    const stream = await openai.responses.create(literally({ model: "tiny", input: "Say it.", stream: true, max_output_tokens: 100, temperature: 0 }, want));
    let text = "";
    const types = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    assert.equal(text, want);
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
  });

  it("function-call round trip: function_call item out, function_call_output back in", async () => {
    const first = await openai.responses.create({ model: "tools", input: "Weather in Paris?", tools: [/** @type {FunctionTool} */ (weatherTool)] });
    const call = /** @type {ResponseFunctionToolCall} */ (first.output.find((i) => i.type === "function_call"));
    assert.equal(call.name, "get_weather");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Paris" });
    assert.match(call.call_id, /^call_/);

    // The output items go back as input items, as the Responses API allows (the SDK types them apart).
    const input = /** @type {import("openai/resources/responses/responses").ResponseInput} */ ([{ role: "user", content: "Weather in Paris?" }, ...first.output, { type: "function_call_output", call_id: call.call_id, output: '{"sky":"sunny"}' }]);
    const second = await openai.responses.create(literally({ model: "tiny", input, max_output_tokens: 100 }, "Sunny in Paris."));
    assert.equal(second.output_text, "Sunny in Paris.");
  });

  it("stream of a function call: arguments deltas and done", async () => {
    const stream = await openai.responses.create({ model: "tools", input: "Weather?", tools: [/** @type {FunctionTool} */ (weatherTool)], stream: true });
    let args = "";
    let done;
    for await (const e of stream) {
      if (e.type === "response.function_call_arguments.delta") args += e.delta;
      if (e.type === "response.function_call_arguments.done") done = e.arguments;
    }
    assert.equal(args, done);
    assert.deepEqual(JSON.parse(/** @type {string} */ (done)), { city: "Paris" });
  });

  it("stored responses: previous_response_id chains turns, retrieve, input_items and delete work, a missing id is a typed 400", async () => {
    /** @type {StoredResponse} */
    const first = await openai.responses.create(literally({ model: "tiny", input: "Name a colour.", max_output_tokens: 40, temperature: 0 }, "Blue."));
    assert.equal(first.store, true);
    const second = await openai.responses.create(literally({ model: "tiny", input: "Another?", previous_response_id: first.id, max_output_tokens: 40, temperature: 0 }, "Green."));
    assert.equal(second.previous_response_id, first.id);
    assert.equal(second.output_text, "Green.");
    // The model saw the first turn: the prompt grew by it.
    const [before, after] = /** @type {Array<import("openai/resources/responses/responses").ResponseUsage>} */ ([first.usage, second.usage]);
    assert.ok(after.input_tokens > before.input_tokens, `${after.input_tokens} > ${before.input_tokens}`);

    const got = await openai.responses.retrieve(second.id);
    assert.equal(got.output_text, "Green.");
    /** @type {Array<{ type: string, role?: string, content?: Array<{ text?: string }> }>} */
    const items = [];
    for await (const item of openai.responses.inputItems.list(second.id)) items.push(/** @type {(typeof items)[number]} */ (item));
    assert.deepEqual(items.map((i) => [i.type, i.role, i.content?.[0]?.text]), [["message", "user", "Another?"]]);

    const deleted = await openai.responses.delete(first.id);
    assert.deepEqual(deleted, { id: first.id, object: "response.deleted", deleted: true });
    await assert.rejects(openai.responses.retrieve(first.id), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(openai.responses.create({ model: "tiny", input: "x", previous_response_id: "resp_123" }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, "previous_response_not_found");
      assert.equal(e.param, "previous_response_id");
      return true;
    });
  });

});

describe("openai client: embeddings.create and completions.create", () => {
  it("embeddings from a llama-server started with --embeddings, after skipping a browser target", async () => {
    const { data: res, response } = await openai.embeddings.create({ model: "embed", input: ["hello", "world"], encoding_format: "float" }).withResponse();
    assert.equal(res.model, "embed");
    assert.equal(res.data.length, 2);
    assert.ok(res.data[0].embedding.length > 0);
    assert.equal(typeof res.data[0].embedding[0], "number");
    assert.equal(response.headers.get("x-switchyard-attempts"), "1"); // the browser target is skipped, not tried
  });

  it("embeddings from a server without --embeddings: a typed 400 naming the fix", async () => {
    await assert.rejects(openai.embeddings.create({ model: "tiny", input: "hello" }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, "embeddings_not_supported");
      return true;
    });
  });

  it("text completions, stream and not", async () => {
    const res = await openai.completions.create(literally({ model: "tiny", prompt: "Once", max_tokens: 50 }, " upon a time."));
    assert.equal(res.choices[0].text, " upon a time.");
    const stream = await openai.completions.create(literally({ model: "tiny", prompt: "Once", max_tokens: 50, stream: true }, " in a stream."));
    let text = "";
    for await (const c of stream) text += c.choices[0]?.text ?? "";
    assert.equal(text, " in a stream.");
  });

  it("text completions with logprobs: the legacy tokens, token_logprobs, top_logprobs and text_offset", async () => {
    const res = await openai.completions.create(literally({ model: "tiny", prompt: "Once", max_tokens: 50, logprobs: 2 }, " upon a time."));
    const lp = /** @type {Required<NonNullable<typeof res.choices[0]["logprobs"]>>} */ (res.choices[0].logprobs);
    assert.equal(lp.tokens.join(""), " upon a time.");
    assert.equal(lp.token_logprobs.length, lp.tokens.length);
    assert.ok(lp.top_logprobs.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 2), JSON.stringify(lp.top_logprobs));
    assert.equal(lp.text_offset[0], 0);
    const stream = await openai.completions.create(literally({ model: "tiny", prompt: "Once", max_tokens: 50, logprobs: 1, stream: true }, " in a stream."));
    let tokens = "";
    for await (const c of stream) tokens += /** @type {{ tokens: string[] } | null | undefined} */ (c.choices[0]?.logprobs)?.tokens.join("") ?? "";
    assert.equal(tokens, " in a stream.");
  });
});

describe("AI SDK default OpenAI provider (Responses API)", () => {
  // The random-weight model needs a literal grammar to say something exact: add it to each body.
  /** @param {string} text */
  const withGrammar = (text) => (/** @type {string | URL | Request} */ url, /** @type {RequestInit | undefined} */ init) => fetch(url, { ...init, body: JSON.stringify({ ...JSON.parse(/** @type {string} */ (init?.body)), grammar: grammar(text) }) });
  /** @param {string} [text] */
  const provider = (text) => createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "not-needed-in-dev", ...(text ? { fetch: withGrammar(text) } : {}) });

  it("generateText", async () => {
    const result = await generateText({ model: provider("AI SDK says hi.")("tiny"), prompt: "Say hi.", maxOutputTokens: 100, maxRetries: 0 });
    assert.equal(result.text, "AI SDK says hi.");
    assert.equal(result.finishReason, "stop");
    assert.ok((result.usage.outputTokens ?? 0) > 0);
  });

  it("streamText", async () => {
    const result = streamText({ model: provider("Streamed by the AI SDK.")("tiny"), prompt: "Say it.", maxOutputTokens: 100, maxRetries: 0 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, "Streamed by the AI SDK.");
    assert.equal(await result.finishReason, "stop");
  });

  it("a tool loop: the tool call is executed and its result goes back as function_call_output", async () => {
    let executed;
    const result = await generateText({
      model: provider()("tools"),
      prompt: "Weather in Paris?",
      tools: { get_weather: tool({ inputSchema: jsonSchema(/** @type {import("ai").JSONSchema7} */ (weatherTool.parameters)), execute: async (input) => ((executed = input), { sky: "sunny" }) }) },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
      providerOptions: { openai: { store: false } },
    });
    assert.deepEqual(executed, { city: "Paris" });
    assert.equal(result.steps.length, 2);
    const sent = /** @type {Array<{ body: string }>} */ (await (await fetch(`${fixtures.url}/_requests`)).json()).at(-1);
    /** @type {{ messages: Array<{ role: string, content: string }> }} */
    const { messages } = JSON.parse(/** @type {string} */ (sent?.body));
    const toolMessage = /** @type {(typeof messages)[number]} */ (messages.find((m) => m.role === "tool"));
    assert.match(toolMessage.content, /sunny/);
  });
});

describe("Anthropic client: messages", () => {
  it("non-stream: a message with the exact text", async () => {
    const msg = await anthropic.messages.create(literally({ model: "tiny", max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Say it." }] }, "Messages end to end."));
    assert.equal(msg.type, "message");
    assert.equal(textOf(msg.content[0]), "Messages end to end.");
    assert.equal(msg.stop_reason, "end_turn");
    assert.ok(msg.usage.output_tokens > 0);
  });

  it("stream: the SDK's stream helper assembles the final message", async () => {
    const want = "Anthropic streaming ✓";
    const stream = anthropic.messages.stream(literally({ model: "tiny", max_tokens: 100, messages: [{ role: "user", content: "Say it." }] }, want));
    let text = "";
    stream.on("text", (t) => (text += t));
    const final = await stream.finalMessage();
    assert.equal(text, want);
    assert.equal(textOf(final.content[0]), want);
    assert.equal(final.stop_reason, "end_turn");
  });

  it("tool use round trip: tool_use out, tool_result back in", async () => {
    /** @type {import("@anthropic-ai/sdk/resources/messages").Tool[]} */
    const tools = [{ name: "get_weather", input_schema: /** @type {import("@anthropic-ai/sdk/resources/messages").Tool.InputSchema} */ (weatherTool.parameters) }];
    const first = await anthropic.messages.create({ model: "tools", max_tokens: 100, tools, messages: [{ role: "user", content: "Weather in Paris?" }] });
    assert.equal(first.stop_reason, "tool_use");
    const use = /** @type {ToolUseBlock} */ (first.content.find((b) => b.type === "tool_use"));
    assert.deepEqual(use.input, { city: "Paris" });
    const second = await anthropic.messages.create(
      literally(
        {
          model: "tiny",
          max_tokens: 100,
          messages: [
            { role: "user", content: "Weather in Paris?" },
            { role: "assistant", content: first.content },
            { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
          ],
        },
        "Sunny.",
      ),
    );
    assert.equal(textOf(second.content[0]), "Sunny.");
  });

  it("typed errors: unknown model → NotFoundError with Anthropic's error shape", async () => {
    await assert.rejects(anthropic.messages.create({ model: "nope", max_tokens: 10, messages: [{ role: "user", content: "x" }] }), (e) => {
      assert.ok(e instanceof Anthropic.NotFoundError);
      // The SDK keeps the body as it came: Anthropic's error shape.
      const body = /** @type {{ type: string, error: { type: string } }} */ (e.error);
      assert.equal(body.type, "error");
      assert.equal(body.error.type, "not_found_error");
      return true;
    });
  });
});

describe("a client that leaves a stream", () => {
  const bodies = {
    "/v1/responses": { model: "endless", input: "go on", stream: true },
    "/v1/messages": { model: "endless", max_tokens: 100000, messages: [{ role: "user", content: "go on" }], stream: true },
    "/v1/completions": { model: "endless", prompt: "go on", stream: true },
  };
  for (const [path, body] of Object.entries(bodies)) {
    it(`${path}: the upstream is stopped within 1 s`, async () => {
      const requestId = `leave-${path.split("/").pop()}-${Date.now()}`;
      const ac = new AbortController();
      const res = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": requestId }, body: JSON.stringify(body), signal: ac.signal });
      assert.equal(res.status, 200);
      await /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader().read();
      const abortedAt = Date.now();
      ac.abort();
      let ms = Infinity;
      for (let i = 0; i < 40 && ms === Infinity; i++) {
        const hit = /** @type {Array<{ requestId: string, at: number }>} */ (await (await fetch(`${fixtures.url}/_closed`)).json()).find((c) => c.requestId === requestId);
        if (hit) ms = hit.at - abortedAt;
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(ms <= 1000, `upstream closed after ${ms} ms`);
    });
  }
});
