// An agent loop with the official `openai` client through wrangler dev, against the real llama-server
// in prompt mode: literal grammars make the model write each tool-call dialect as text, token by
// token; Switchyard hands the client executable tool_calls, streamed and not.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

/**
 * @typedef {import("openai/resources/chat/completions").ChatCompletionMessageParam} ChatCompletionMessageParam
 * @typedef {import("openai/resources/chat/completions").ChatCompletionMessageFunctionToolCall} FunctionToolCall
 * @typedef {Omit<import("openai/resources/chat/completions").ChatCompletionCreateParamsBase, "stream"> & { grammar: string }} ChatBody llama-server's `grammar` passes through
 */

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let client;

before(async () => {
  llama = await startLlamaServer({ parallel: 2, args: ["-t", "1"] });
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models: { agent: { targets: [{ kind: "llama", url: llama.url, tools: "prompt" }] } } } } });
  client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "dev", maxRetries: 0 });
});

after(async () => {
  await proxy?.stop();
  await llama?.stop();
});

/** @type {import("openai/resources/chat/completions").ChatCompletionTool[]} */
const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const execute = { get_weather: (/** @type {{ city: string }} */ { city }) => `18°C and sunny in ${city}` };

const DIALECTS = {
  hermes: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
  "llama3 json": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
  mistral: '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]',
  pythonic: "[get_weather(city='Paris')]",
  "function tag": '<function=get_weather>{"city": "Paris"}</function>',
  "broken json in a fence": '```json\n{"name": "get_weather", "arguments": {"city": "Paris",}}\n```',
};

/**
 * @param {ChatCompletionMessageParam[]} messages
 * @param {string} literal what the model writes (a one-sentence grammar)
 * @param {boolean} stream
 */
async function turn(messages, literal, stream) {
  /** @type {ChatBody} */
  const body = { model: "agent", messages, tools, temperature: 0, max_tokens: 300, grammar: grammar(literal) };
  if (!stream) return (await client.chat.completions.create(body)).choices[0];
  const s = client.chat.completions.stream(body);
  let firstDeltaAt = 0;
  const started = Date.now();
  s.on("content", () => (firstDeltaAt ||= Date.now() - started));
  const done = await s.finalChatCompletion();
  return done.choices[0];
}

for (const stream of [false, true]) {
  describe(`agent loop (${stream ? "stream" : "non-stream"})`, () => {
    for (const [name, literal] of Object.entries(DIALECTS)) {
      it(name, async () => {
        /** @type {ChatCompletionMessageParam[]} */
        const messages = [{ role: "user", content: "What is the weather in Paris?" }];
        const first = await turn(messages, literal, stream);
        assert.equal(first.finish_reason, "tool_calls");
        const calls = /** @type {FunctionToolCall[]} */ (first.message.tool_calls);
        assert.equal(calls.length, 1);
        assert.equal(calls[0].function.name, "get_weather");
        const args = JSON.parse(calls[0].function.arguments);
        assert.deepEqual(args, { city: "Paris" });
        messages.push(first.message);
        messages.push({ role: "tool", tool_call_id: calls[0].id, content: execute.get_weather(args) });
        const answer = await turn(messages, "It is 18°C and sunny in Paris.", stream);
        assert.equal(answer.finish_reason, "stop");
        assert.equal(answer.message.content, "It is 18°C and sunny in Paris.");
      });
    }
  });
}
