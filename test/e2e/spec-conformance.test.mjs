// Every object and stream event Switchyard writes, checked against the published specifications
// clients are generated from: OpenAI's openapi.yaml and the JSON Schema of Anthropic's SDK types,
// read from ../shared/data/specs/ (never copied here; scripts/spec-schemas.mjs). Real answers:
// `wrangler dev` in front of a real llama-server, text fixed by literal grammars, tool calls written
// by the model as text in prompt mode and turned into calls by Switchyard's rewriter.
//
// Where the specification's own text asks for more than its schema, the test checks that too (chat
// chunks carry `"usage": null` before the usage chunk). Exceptions, each named where it is made
// (grep EXCEPTION): user null, usage null and completion chunk (below the imports), and
// - EXCEPTION ping: Anthropic's `ping` stream event is in its streaming documentation but not in the
//   SDK's RawMessageStreamEvent union; it is checked to be exactly {"type":"ping"}.
// - EXCEPTION socket error: OpenAI's ResponsesWebSocketStreamEvent has no error event; the socket's
//   `{"type":"error","status",…,"error":{…}}` frame (what Codex reads) has its `error` checked as the
//   spec's `Error` object.
// - EXCEPTION stream error event: Anthropic's SDK has no type for the stream's `error` event; it is
//   checked as ErrorResponse (the same body as an HTTP error).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";
import { loadSpecs } from "../../scripts/spec-schemas.mjs";

const specs = loadSpecs();
// EXCEPTION user null: Response.user (deprecated) is a string in the schema; the spec's own Response
// examples and the live API write `"user": null` when none was sent, and the SDKs accept it.
specs.allowNull("openai:Response", "user");
// EXCEPTION usage null: Response.usage is not nullable in the schema, but the spec's examples of
// response.created / response.in_progress (and the live API) carry `"usage": null` until the end.
specs.allowNull("openai:Response", "usage");
// EXCEPTION completion chunk: the spec says a streamed completion's chunks are CreateCompletionResponse
// objects, whose finish_reason has no null; the live API (and llama-server) send null until the last
// chunk, as chat chunks have it. Chunks are checked against that schema with a null finish_reason allowed.
specs.derive("openai:CompletionChunk", "openai:CreateCompletionResponse", (s) => {
  const finish = s.properties.choices.items.properties.finish_reason;
  s.properties.choices.items.properties.finish_reason = { if: { type: "null" }, else: finish };
});
const { openai: oa, anthropic: an } = specs.sources;

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let embedder;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  [llama, embedder] = await Promise.all([
    startLlamaServer({ parallel: 2, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1", "--embeddings", "--pooling", "mean"] }),
  ]);
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          tiny: { targets: [{ kind: "llama", url: llama.url }] },
          agent: { targets: [{ kind: "llama", url: llama.url, tools: "prompt" }] },
          embed: { targets: [{ kind: "llama", url: embedder.url }] },
        },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([llama?.stop(), embedder?.stop()]);
});

/** @typedef {Record<string, any>} Json */

/**
 * What one test found: every object and event checked, the failures gathered and reported together
 * at `done()`, each naming the object, the schema and every way it breaks it.
 */
function checks() {
  /** @type {string[]} */
  const failures = [];
  return {
    /**
     * @param {string} what where the object came from (endpoint, event)
     * @param {string} schema `openai:<name>` or `anthropic:<name>`
     * @param {unknown} value
     */
    object(what, schema, value) {
      const errors = specs.check(schema, value);
      if (errors.length) failures.push(`${what} (${schema}):\n    ${errors.join("\n    ")}\n    ${JSON.stringify(value).slice(0, 800)}`);
    },
    /**
     * Every frame of a stream; the first failure of each event type is reported.
     * @param {string} what
     * @param {Array<{ event?: string, data: Json }>} frames
     * @param {(frame: { event?: string, data: Json }) => string | null} schemaOf the schema of a frame, null for none
     */
    frames(what, frames, schemaOf) {
      const seen = new Set();
      for (const f of frames) {
        const schema = schemaOf(f);
        if (!schema) continue;
        const key = `${f.data.type ?? f.data.object ?? "frame"}`;
        if (seen.has(key)) continue;
        const errors = specs.check(schema, f.data);
        if (errors.length === 0) continue;
        seen.add(key);
        failures.push(`${what}: ${key} (${schema}):\n    ${errors.join("\n    ")}\n    ${JSON.stringify(f.data).slice(0, 800)}`);
      }
    },
    /** A rule the specification states in words, not in its schema. */
    rule(/** @type {string} */ what, /** @type {boolean} */ holds, /** @type {string} */ detail) {
      if (!holds) failures.push(`${what}: ${detail}`);
    },
    done() {
      assert.equal(failures.length, 0, `${failures.length} nonconforming:\n  ${failures.join("\n  ")}`);
    },
  };
}

/**
 * @param {string} path
 * @param {Json} body
 * @param {Record<string, string>} [headers]
 */
async function post(path, body, headers = {}) {
  const res = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: /** @type {Json} */ (await res.json()) };
}

/** @param {string} path @param {Record<string, string>} [headers] */
async function get(path, headers = {}) {
  const res = await fetch(`${proxy.url}${path}`, { headers });
  return { status: res.status, body: /** @type {Json} */ (await res.json()) };
}

/**
 * A streamed answer's frames: `event:` name (if any) and parsed `data:` ([DONE] left out).
 * @param {string} path
 * @param {Json} body
 * @param {Record<string, string>} [headers]
 */
async function stream(path, body, headers = {}) {
  const res = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  assert.equal(res.status, 200, await res.clone().text());
  const raw = await res.text();
  /** @type {Array<{ event?: string, data: Json }>} */
  const frames = [];
  for (const block of raw.split("\n\n")) {
    let event;
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length === 0 || data.join("\n") === "[DONE]") continue;
    frames.push({ event, data: JSON.parse(data.join("\n")) });
  }
  assert.ok(frames.length > 0, `no frames in ${raw.slice(0, 500)}`);
  return frames;
}

const HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const chatTool = { type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const responsesTool = { type: "function", name: "get_weather", description: "Weather for a city", parameters: chatTool.function.parameters };
const anthropicTool = { name: "get_weather", description: "Weather for a city", input_schema: chatTool.function.parameters };
const ANTHROPIC = { "anthropic-version": "2023-06-01" };

/** A chat body for `model` that makes the model write exactly `text`. */
const literal = (/** @type {string} */ text, /** @type {Json} */ more = {}) => ({ temperature: 0, max_tokens: 200, grammar: grammar(text), ...more });

describe(`OpenAI: openai/openai-openapi@${oa.commit.slice(0, 12)} (${oa.date.slice(0, 10)})`, () => {
  it("chat completion: plain, tool call and logprobs bodies", async () => {
    const c = checks();
    const plain = await post("/v1/chat/completions", { model: "tiny", messages: [{ role: "user", content: "Hi" }], ...literal("Conformance.") });
    assert.equal(plain.status, 200);
    c.object("POST /v1/chat/completions", "openai:CreateChatCompletionResponse", plain.body);
    const tools = await post("/v1/chat/completions", { model: "agent", messages: [{ role: "user", content: "Weather in Paris?" }], tools: [chatTool], ...literal(HERMES_CALL, { max_tokens: 300 }) });
    assert.equal(tools.body.choices?.[0]?.finish_reason, "tool_calls", JSON.stringify(tools.body));
    c.object("POST /v1/chat/completions (tool call)", "openai:CreateChatCompletionResponse", tools.body);
    const logprobs = await post("/v1/chat/completions", { model: "tiny", messages: [{ role: "user", content: "Hi" }], logprobs: true, top_logprobs: 2, ...literal("With logprobs.") });
    assert.ok(logprobs.body.choices?.[0]?.logprobs?.content?.length > 0, JSON.stringify(logprobs.body));
    c.object("POST /v1/chat/completions (logprobs)", "openai:CreateChatCompletionResponse", logprobs.body);
    c.done();
  });

  it("chat completion chunks: plain with usage (usage: null before the last), tool call, logprobs", async () => {
    const c = checks();
    const chunk = () => "openai:CreateChatCompletionStreamResponse";
    const plain = await stream("/v1/chat/completions", { model: "tiny", messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true }, ...literal("Streamed conformance.") });
    c.frames("chat stream (include_usage)", plain, chunk);
    // The spec's text for stream_options.include_usage: "All other chunks will also include a usage field, but with a null value."
    const last = plain.at(-1)?.data;
    c.rule("chat stream (include_usage): the last chunk", last?.usage && last.choices.length === 0, `carries the usage and no choices: ${JSON.stringify(last)}`);
    const without = plain.slice(0, -1).filter((f) => f.data.usage !== null);
    c.rule("chat stream (include_usage): the chunks before the last", without.length === 0, `${without.length} without "usage": null, e.g. ${JSON.stringify(without[0]?.data)}`);

    const tools = await stream("/v1/chat/completions", { model: "agent", messages: [{ role: "user", content: "Weather in Paris?" }], tools: [chatTool], stream: true, ...literal(HERMES_CALL, { max_tokens: 300 }) });
    assert.ok(tools.some((f) => f.data.choices?.[0]?.delta?.tool_calls), "a tool_calls delta");
    c.frames("chat stream (tool call)", tools, chunk);

    const logprobs = await stream("/v1/chat/completions", { model: "tiny", messages: [{ role: "user", content: "Hi" }], stream: true, logprobs: true, top_logprobs: 2, ...literal("Streamed logprobs.") });
    assert.ok(logprobs.some((f) => f.data.choices?.[0]?.logprobs?.content?.length > 0), "a chunk with logprobs");
    c.frames("chat stream (logprobs)", logprobs, chunk);
    c.done();
  });

  it("completions: body and chunks", async () => {
    const c = checks();
    const body = { model: "tiny", prompt: "Once", temperature: 0, max_tokens: 50, grammar: grammar(" upon a time.") };
    const plain = await post("/v1/completions", body);
    assert.equal(plain.status, 200);
    c.object("POST /v1/completions", "openai:CreateCompletionResponse", plain.body);
    const chunks = await stream("/v1/completions", { ...body, stream: true, stream_options: { include_usage: true } });
    c.frames("completions stream", chunks, () => "openai:CompletionChunk");
    c.done();
  });

  it("responses: the object, every stream event (text and function call), retrieve, input items", async () => {
    const c = checks();
    const created = await post("/v1/responses", { model: "tiny", input: "Say it.", instructions: "Be brief.", max_output_tokens: 100, temperature: 0, grammar: grammar("Responses conformance.") });
    assert.equal(created.status, 200);
    c.object("POST /v1/responses", "openai:Response", created.body);
    const text = await stream("/v1/responses", { model: "tiny", input: "Say it.", stream: true, max_output_tokens: 100, temperature: 0, grammar: grammar("Streamed responses.") });
    c.frames("responses stream", text, () => "openai:ResponseStreamEvent");
    const call = await stream("/v1/responses", { model: "agent", input: "Weather in Paris?", tools: [responsesTool], stream: true, max_output_tokens: 300, temperature: 0, grammar: grammar(HERMES_CALL) });
    assert.ok(call.some((f) => f.data.type === "response.function_call_arguments.done"), "a function call");
    c.frames("responses stream (function call)", call, () => "openai:ResponseStreamEvent");

    const stored = await get(`/v1/responses/${created.body.id}`);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    c.object("GET /v1/responses/{id}", "openai:Response", stored.body);
    const items = await get(`/v1/responses/${created.body.id}/input_items`);
    assert.equal(items.status, 200, JSON.stringify(items.body));
    c.object("GET /v1/responses/{id}/input_items", "openai:ResponseItemList", items.body);
    c.done();
  });

  it("responses: /v1/responses/compact and a compaction over the WebSocket", async () => {
    const c = checks();
    const compact = await post("/v1/responses/compact", { model: "tiny", input: [{ role: "user", content: "Plan the trip." }], max_output_tokens: 100, temperature: 0, grammar: grammar("The trip is planned.") });
    assert.equal(compact.status, 200, JSON.stringify(compact.body));
    c.object("POST /v1/responses/compact", "openai:CompactResource", compact.body);

    const ws = new WebSocket(`${proxy.url.replace("http", "ws")}/v1/responses`);
    /** @type {Json[]} */
    const messages = [];
    /** @type {(() => void) | null} */
    let wake = null;
    ws.addEventListener("message", (e) => {
      messages.push(JSON.parse(String(e.data)));
      wake?.();
    });
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve, { once: true });
      ws.addEventListener("error", reject, { once: true });
    });
    /** Waits until a message satisfies `done` (the socket's answers arrive as they are made). */
    const until = async (/** @type {(m: Json) => boolean} */ done) => {
      const deadline = Date.now() + 30_000;
      while (!messages.some(done)) {
        assert.ok(Date.now() < deadline, `no such message among ${JSON.stringify(messages.map((m) => m.type))}`);
        await new Promise((r) => {
          wake = () => r(undefined);
          setTimeout(r, 1000);
        });
      }
    };
    try {
      ws.send(JSON.stringify({ type: "response.create", generate: false, model: "tiny", instructions: "Be brief.", input: "Prewarm." }));
      await until((m) => m.type === "response.completed");
      const prewarm = messages.splice(0);
      ws.send(JSON.stringify({ type: "response.create", model: "tiny", input: "Say it.", max_output_tokens: 100, temperature: 0, grammar: grammar("Over the socket.") }));
      await until((m) => m.type === "response.completed");
      const turn = messages.splice(0);
      ws.send(JSON.stringify({ type: "response.create", model: "tiny", input: [{ role: "user", content: "Plan the trip." }, { type: "compaction_trigger" }], max_output_tokens: 100, temperature: 0, grammar: grammar("Summary.") }));
      await until((m) => m.type === "response.completed");
      const compaction = messages.splice(0);
      assert.ok(compaction.some((m) => m.item?.type === "compaction"), JSON.stringify(compaction.map((m) => m.type)));
      ws.send(JSON.stringify({ type: "response.nonsense" }));
      await until((m) => m.type === "error");
      const socketEvent = "openai:ResponsesWebSocketStreamEvent";
      c.frames("WebSocket response (generate: false)", prewarm.map((data) => ({ data })), () => socketEvent);
      c.frames("WebSocket response", turn.map((data) => ({ data })), () => socketEvent);
      c.frames("WebSocket compaction", compaction.map((data) => ({ data })), () => socketEvent);
      // EXCEPTION socket error (see the top of the file): its `error` is the spec's Error object.
      const error = messages.find((m) => m.type === "error");
      c.object("WebSocket error frame's error", "openai:Error", error?.error);
    } finally {
      ws.close();
    }
    c.done();
  });

  it("models, embeddings and errors", async () => {
    const c = checks();
    const list = await get("/v1/models");
    c.object("GET /v1/models", "openai:ListModelsResponse", list.body);
    const one = await get("/v1/models/tiny");
    c.object("GET /v1/models/tiny", "openai:Model", one.body);
    const embedding = await post("/v1/embeddings", { model: "embed", input: ["one", "two"] });
    assert.equal(embedding.status, 200, JSON.stringify(embedding.body));
    c.object("POST /v1/embeddings", "openai:CreateEmbeddingResponse", embedding.body);
    const unknown = await post("/v1/chat/completions", { model: "nope", messages: [{ role: "user", content: "Hi" }] });
    assert.equal(unknown.status, 404);
    c.object("404 of POST /v1/chat/completions", "openai:ErrorResponse", unknown.body);
    const invalid = await post("/v1/responses", { model: "tiny", input: 42 });
    assert.equal(invalid.status, 400);
    c.object("400 of POST /v1/responses", "openai:ErrorResponse", invalid.body);
    c.done();
  });
});

describe(`Anthropic: anthropic-sdk-typescript@${an.commit.slice(0, 12)} (${an.version ?? an.date.slice(0, 10)})`, () => {
  const message = (/** @type {string} */ text, /** @type {Json} */ more = {}) => ({ model: "tiny", max_tokens: 200, temperature: 0, messages: [{ role: "user", content: "Hi" }], grammar: grammar(text), ...more });

  it("messages: text and tool_use, non-stream", async () => {
    const c = checks();
    const text = await post("/v1/messages", message("Anthropic conformance."), ANTHROPIC);
    assert.equal(text.status, 200, JSON.stringify(text.body));
    c.object("POST /v1/messages", "anthropic:Message", text.body);
    const tool = await post("/v1/messages", message(HERMES_CALL, { model: "agent", max_tokens: 300, tools: [anthropicTool] }), ANTHROPIC);
    assert.equal(tool.body.stop_reason, "tool_use", JSON.stringify(tool.body));
    c.object("POST /v1/messages (tool_use)", "anthropic:Message", tool.body);
    c.done();
  });

  it("messages: every stream event, text and tool_use", async () => {
    const c = checks();
    const schemaOf = (/** @type {{ data: Json }} */ f) => {
      if (f.data.type === "ping") {
        // EXCEPTION ping (see the top of the file).
        assert.deepEqual(f.data, { type: "ping" });
        return null;
      }
      return f.data.type === "error" ? "anthropic:ErrorResponse" : "anthropic:RawMessageStreamEvent";
    };
    const text = await stream("/v1/messages", message("Streamed Anthropic.", { stream: true }), ANTHROPIC);
    c.frames("messages stream", text, schemaOf);
    const tool = await stream("/v1/messages", message(HERMES_CALL, { model: "agent", max_tokens: 300, tools: [anthropicTool], stream: true }), ANTHROPIC);
    assert.ok(tool.some((f) => f.data.content_block?.type === "tool_use"), "a tool_use block");
    c.frames("messages stream (tool_use)", tool, schemaOf);
    c.done();
  });

  it("count_tokens, models with anthropic-version, and errors", async () => {
    const c = checks();
    const count = await post("/v1/messages/count_tokens", { model: "tiny", messages: [{ role: "user", content: "How many tokens?" }] }, ANTHROPIC);
    assert.equal(count.status, 200, JSON.stringify(count.body));
    c.object("POST /v1/messages/count_tokens", "anthropic:MessageTokensCount", count.body);
    const list = await get("/v1/models", ANTHROPIC);
    c.object("GET /v1/models (anthropic-version)", "anthropic:ModelInfoList", list.body);
    const one = await get("/v1/models/tiny", ANTHROPIC);
    c.object("GET /v1/models/tiny (anthropic-version)", "anthropic:ModelInfo", one.body);
    const unknown = await post("/v1/messages", message("x", { model: "nope" }), ANTHROPIC);
    assert.equal(unknown.status, 404);
    c.object("404 of POST /v1/messages", "anthropic:ErrorResponse", unknown.body);
    const invalid = await post("/v1/messages", { model: "tiny", messages: "not a list", max_tokens: 10 }, ANTHROPIC);
    assert.equal(invalid.status, 400);
    c.object("400 of POST /v1/messages", "anthropic:ErrorResponse", invalid.body);
    const noModel = await get("/v1/models/nope", ANTHROPIC);
    assert.equal(noModel.status, 404);
    c.object("404 of GET /v1/models/nope (anthropic-version)", "anthropic:ErrorResponse", noModel.body);
    c.done();
  });
});
