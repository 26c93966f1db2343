// End to end: chat completions through the clients, besides the official `openai` client
// (test/e2e/proxy.test.mjs), that apps point at an OpenAI-compatible URL: the AI SDK's OpenAI
// provider in chat mode (`openai.chat(...)`), the AI SDK's OpenAI-compatible provider (the one its
// docs name for servers like this one) and LangChain's ChatOpenAI (chat completions by default, the
// Responses API with `useResponsesApi`); and structured output (`response_format: json_schema`) through
// each of them and the official client. Through `wrangler dev` (as the launcher runs it), against a real
// llama-server and the fixture upstream's recorded tool-call stream.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { ChatOpenAI } from "@langchain/openai";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { startLlamaServer } from "../support/llama-server.mjs";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

/**
 * A message of a chat request as the fixture upstream received it (the fields these checks read,
 * where they expect them).
 * @typedef {{ role: string, content: string, tool_call_id: string, tool_calls: Array<{ id: string }> }} SentMessage
 * @typedef {{ sky: string }} Sky the structured output's shape
 */

before(async () => {
  [llama, fixtures] = await Promise.all([startLlamaServer({ parallel: 2, args: ["-t", "1"] }), startFixtureUpstream()]);
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          tiny: { targets: [{ kind: "llama", url: llama.url }] },
          tools: { targets: [{ kind: "llama", url: `${fixtures.url}/fixture/stream-native-tool-calls` }] },
        },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([llama?.stop(), fixtures?.close()]);
});

const API_KEY = "not-needed-in-dev";
const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
// The random-weight model needs a literal grammar to say something exact: the AI SDK providers get it
// through their `fetch`, LangChain through `modelKwargs` (how its users pass llama.cpp's extensions).
/** @param {string} text */
const withGrammar = (text) => (/** @type {string | URL | Request} */ url, /** @type {RequestInit | undefined} */ init) => fetch(url, { ...init, body: JSON.stringify({ ...JSON.parse(/** @type {string} */ (init?.body)), grammar: grammar(text) }) });
/**
 * The body of the last request the fixture upstream received.
 * @returns {Promise<{ messages: SentMessage[] }>}
 */
const lastFixtureBody = async () => JSON.parse(/** @type {Array<{ body: string }>} */ (await (await fetch(`${fixtures.url}/_requests`)).json()).at(-1)?.body ?? "");
/** @param {SentMessage | undefined} m the message the test expects */
const sent = (m) => /** @type {SentMessage} */ (m);

/** @type {Array<[string, (text?: string) => (modelId: string) => import("ai").LanguageModel]>} */
const PROVIDERS = [
  ["AI SDK OpenAI provider, chat mode", (text) => createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY, ...(text ? { fetch: withGrammar(text) } : {}) }).chat],
  ["AI SDK OpenAI-compatible provider", (text) => createOpenAICompatible({ name: "switchyard", baseURL: `${proxy.url}/v1`, apiKey: API_KEY, includeUsage: true, ...(text ? { fetch: withGrammar(text) } : {}) })],
];
for (const [name, chatModel] of PROVIDERS) {
  describe(name, () => {
    it("generateText: the exact text, finish reason and usage", async () => {
      const result = await generateText({ model: chatModel("Chat mode says hi.")("tiny"), prompt: "Say hi.", maxOutputTokens: 100, maxRetries: 0 });
      assert.equal(result.text, "Chat mode says hi.");
      assert.equal(result.finishReason, "stop");
      assert.ok((result.usage.inputTokens ?? 0) > 0 && (result.usage.outputTokens ?? 0) > 0, JSON.stringify(result.usage));
    });

    it("streamText: deltas add up, usage arrives with the stream", async () => {
      const result = streamText({ model: chatModel("Streamed in chat mode.")("tiny"), prompt: "Say it.", maxOutputTokens: 100, maxRetries: 0 });
      let text = "";
      for await (const delta of result.textStream) text += delta;
      assert.equal(text, "Streamed in chat mode.");
      assert.equal(await result.finishReason, "stop");
      assert.ok(((await result.usage).outputTokens ?? 0) > 0);
    });

    it("a tool loop: the call is executed and its result goes back as a tool message with the call's id", async () => {
      let executed;
      const result = await generateText({
        model: chatModel()("tools"),
        prompt: "Weather in Paris?",
        tools: { get_weather: tool({ inputSchema: jsonSchema(weather), execute: async (input) => ((executed = input), { sky: "sunny" }) }) },
        stopWhen: stepCountIs(2),
        maxRetries: 0,
      });
      assert.deepEqual(executed, { city: "Paris" });
      assert.equal(result.steps.length, 2);
      const call = result.steps[0].toolCalls[0];
      assert.equal(call.toolName, "get_weather");
      const messages = (await lastFixtureBody()).messages;
      const assistant = sent(messages.find((m) => m.role === "assistant"));
      const toolMessage = sent(messages.find((m) => m.role === "tool"));
      assert.match(toolMessage.content, /sunny/);
      // The id the client saw is the one it sent back; llama-server gets it in its own id format.
      assert.equal(assistant.tool_calls[0].id, toolMessage.tool_call_id);
      assert.match(call.toolCallId, /\S/);
    });
  });
}

describe("LangChain ChatOpenAI", () => {
  /**
   * @param {string} [text] the literal the model is to write
   * @param {ConstructorParameters<typeof ChatOpenAI>[0]} [extra]
   */
  const chat = (text, extra = {}) => new ChatOpenAI({ model: "tiny", apiKey: API_KEY, maxRetries: 0, maxTokens: 100, configuration: { baseURL: `${proxy.url}/v1` }, ...(text ? { modelKwargs: { grammar: grammar(text) } } : {}), ...extra });

  it("invoke (chat completions): the exact text and usage metadata", async () => {
    const msg = await chat("LangChain says hi.").invoke("Say hi.");
    assert.equal(msg.content, "LangChain says hi.");
    assert.equal(msg.response_metadata.finish_reason, "stop");
    assert.ok((msg.usage_metadata?.output_tokens ?? 0) > 0, JSON.stringify(msg.usage_metadata));
  });

  it("stream: chunks add up to the text, and the last ones carry usage", async () => {
    let text = "";
    let usage;
    for await (const chunk of await chat("Streamed by LangChain.").stream("Say it.")) {
      text += chunk.content;
      usage = chunk.usage_metadata ?? usage;
    }
    assert.equal(text, "Streamed by LangChain.");
    assert.ok((usage?.output_tokens ?? 0) > 0, JSON.stringify(usage));
  });

  it("bindTools: tool_calls parsed, and a ToolMessage goes back with the call's id", async () => {
    const llm = new ChatOpenAI({ model: "tools", apiKey: API_KEY, maxRetries: 0, configuration: { baseURL: `${proxy.url}/v1` } }).bindTools([{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: weather } }]);
    const first = await llm.invoke([new HumanMessage("Weather in Paris?")]);
    const calls = /** @type {NonNullable<typeof first.tool_calls>} */ (first.tool_calls);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, "get_weather");
    assert.deepEqual(calls[0].args, { city: "Paris" });
    assert.ok(calls[0].id);
    assert.deepEqual(first.invalid_tool_calls ?? [], []);

    await llm.invoke([new HumanMessage("Weather in Paris?"), new AIMessage({ content: "", tool_calls: calls }), new ToolMessage({ content: '{"sky":"sunny"}', tool_call_id: /** @type {string} */ (calls[0].id) })]);
    const messages = (await lastFixtureBody()).messages;
    const toolMessage = sent(messages.find((m) => m.role === "tool"));
    assert.equal(toolMessage.content, '{"sky":"sunny"}');
    assert.equal(sent(messages.find((m) => m.role === "assistant")).tool_calls[0].id, toolMessage.tool_call_id);
  });

  it("useResponsesApi: the same model through /v1/responses", async () => {
    const msg = await chat("Responses via LangChain.", { useResponsesApi: true }).invoke("Say it.");
    const text = typeof msg.content === "string" ? msg.content : msg.content.map((p) => ("text" in p ? p.text : "") ?? "").join("");
    assert.equal(text, "Responses via LangChain.");
    assert.ok((msg.usage_metadata?.output_tokens ?? 0) > 0);
  });

  it("an unknown model: the client's error carries the 404 and the proxy's message", async () => {
    const err = await new ChatOpenAI({ model: "no-such-model", apiKey: API_KEY, maxRetries: 0, configuration: { baseURL: `${proxy.url}/v1` } }).invoke("Hi").then(
      () => null,
      (e) => e,
    );
    assert.ok(err, "the call should fail");
    assert.equal(err.status, 404, String(err));
    assert.match(err.message, /no-such-model/);
  });
});

describe("structured output: response_format json_schema, enforced by llama-server", () => {
  // llama-server turns the schema into a grammar, so even the random-weight model can only write JSON
  // that fits it (an enum keeps the answer short).
  const sky = { type: "object", properties: { sky: { type: "string", enum: ["sunny", "rainy", "cloudy"] } }, required: ["sky"], additionalProperties: false };
  const SKIES = ["sunny", "rainy", "cloudy"];

  it("openai client: the content parses and fits the schema", async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const res = await client.chat.completions.create({ model: "tiny", max_tokens: 60, messages: [{ role: "user", content: "Sky?" }], response_format: { type: "json_schema", json_schema: { name: "sky", strict: true, schema: sky } } });
    assert.equal(res.choices[0].finish_reason, "stop");
    const content = /** @type {string} */ (res.choices[0].message.content);
    assert.ok(SKIES.includes(JSON.parse(content).sky), content);
  });

  it("openai client on the Responses API: text.format json_schema", async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const res = await client.responses.create({ model: "tiny", input: "Sky?", max_output_tokens: 60, store: false, text: { format: { type: "json_schema", name: "sky", strict: true, schema: sky } } });
    assert.equal(res.status, "completed");
    assert.ok(SKIES.includes(JSON.parse(res.output_text).sky), res.output_text);
  });

  it("AI SDK generateObject, OpenAI provider in chat mode", async () => {
    const { object } = await generateObject({ model: createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY }).chat("tiny"), schema: jsonSchema(sky), prompt: "Sky?", maxOutputTokens: 60, maxRetries: 0 });
    assert.ok(SKIES.includes(/** @type {Sky} */ (object).sky), JSON.stringify(object));
  });

  it("AI SDK generateObject, default OpenAI provider (the Responses API: text.format)", async () => {
    const { object } = await generateObject({ model: createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY })("tiny"), schema: jsonSchema(sky), prompt: "Sky?", maxOutputTokens: 60, maxRetries: 0, providerOptions: { openai: { store: false } } });
    assert.ok(SKIES.includes(/** @type {Sky} */ (object).sky), JSON.stringify(object));
  });

  it("AI SDK generateObject, OpenAI-compatible provider with structured outputs", async () => {
    const provider = createOpenAICompatible({ name: "switchyard", baseURL: `${proxy.url}/v1`, apiKey: API_KEY, supportsStructuredOutputs: true });
    const { object } = await generateObject({ model: provider("tiny"), schema: jsonSchema(sky), prompt: "Sky?", maxOutputTokens: 60, maxRetries: 0 });
    assert.ok(SKIES.includes(/** @type {Sky} */ (object).sky), JSON.stringify(object));
  });

  it("LangChain withStructuredOutput (jsonSchema method)", async () => {
    const llm = new ChatOpenAI({ model: "tiny", apiKey: API_KEY, maxRetries: 0, maxTokens: 60, configuration: { baseURL: `${proxy.url}/v1` } });
    const out = await llm.withStructuredOutput({ ...sky, title: "sky", description: "The sky" }, { method: "jsonSchema" }).invoke("Sky?");
    assert.ok(SKIES.includes(out.sky), JSON.stringify(out));
  });
});

describe("logprobs", () => {
  // llama-server sends each content chunk's token entries in OpenAI's shape; Switchyard keeps them on
  // that chunk, and gathers them for a non-stream answer.
  const client = () => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
  /**
   * @param {string} text
   * @returns {import("openai/resources/chat/completions").ChatCompletionCreateParamsNonStreaming & { grammar: string }} llama-server's `grammar` passes through
   */
  const body = (text) => ({ model: "tiny", max_tokens: 40, messages: [{ role: "user", content: "Say it." }], logprobs: true, top_logprobs: 3, grammar: grammar(text) });
  /** @typedef {import("openai/resources/chat/completions").ChatCompletionTokenLogprob[]} TokenLogprobs */

  it("non-stream: one entry per token, in order, with top_logprobs", async () => {
    const res = await client().chat.completions.create(body("Logprobs, please."));
    const { content, logprobs } = { content: res.choices[0].message.content, logprobs: res.choices[0].logprobs };
    assert.equal(content, "Logprobs, please.");
    const entries = /** @type {TokenLogprobs} */ (logprobs?.content);
    assert.equal(entries.map((e) => e.token).join(""), content);
    for (const e of entries) {
      assert.ok(e.logprob <= 0 && Array.isArray(e.bytes) && e.top_logprobs.length === 3, JSON.stringify(e));
    }
  });

  it("LangChain ChatOpenAI with logprobs: response_metadata.logprobs holds the tokens", async () => {
    const llm = new ChatOpenAI({ model: "tiny", apiKey: API_KEY, maxRetries: 0, maxTokens: 40, logprobs: true, topLogprobs: 2, configuration: { baseURL: `${proxy.url}/v1` }, modelKwargs: { grammar: grammar("LangChain logprobs.") } });
    const msg = await llm.invoke("Say it.");
    assert.equal(msg.content, "LangChain logprobs.");
    assert.equal(/** @type {{ content: TokenLogprobs }} */ (msg.response_metadata.logprobs).content.map((e) => e.token).join(""), msg.content);
  });

  it("the Responses API with include message.output_text.logprobs: on the output_text part", async () => {
    /** @type {import("openai/resources/responses/responses").ResponseCreateParamsNonStreaming & { grammar: string }} llama-server's `grammar` passes through */
    const request = { model: "tiny", input: "Say it.", max_output_tokens: 40, store: false, include: ["message.output_text.logprobs"], top_logprobs: 2, grammar: grammar("Responses logprobs.") };
    const res = await client().responses.create(request);
    const message = /** @type {import("openai/resources/responses/responses").ResponseOutputMessage} */ (res.output.find((o) => o.type === "message"));
    const part = /** @type {import("openai/resources/responses/responses").ResponseOutputText} */ (message.content[0]);
    assert.equal(part.text, "Responses logprobs.");
    const logprobs = /** @type {NonNullable<typeof part.logprobs>} */ (part.logprobs);
    assert.equal(logprobs.map((e) => e.token).join(""), part.text);
    assert.equal(logprobs[0].top_logprobs.length, 2);
  });

  it("stream: every content chunk carries its own tokens' entries", async () => {
    const stream = await client().chat.completions.create({ ...body("Streamed logprobs."), stream: true });
    let text = "";
    let tokens = "";
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice?.delta?.content) continue;
      text += choice.delta.content;
      tokens += /** @type {TokenLogprobs} */ (choice.logprobs?.content).map((e) => e.token).join("");
    }
    assert.equal(text, "Streamed logprobs.");
    assert.equal(tokens, text);
  });
});
