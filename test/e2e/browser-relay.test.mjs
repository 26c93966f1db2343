// End to end: `npm start` (wrangler dev, real workerd) with a dead llama.cpp upstream; a Node session
// client written from docs/relay-protocol.md serves the team model with the fake web-llm engine, and
// the official openai client gets its answers from it.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { DEAD_UPSTREAM } from "../support/llama-server.mjs";
import { startRelayClient } from "../support/relay-client.mjs";
import { readSse, startSwitchyard } from "../support/switchyard-dev.mjs";
import { FakeEngine, fakeEmbedding } from "../fakes/fake-web-llm.mjs";

const MODEL = "SmolLM2-360M-Instruct-q4f32_1-MLC";
const TOKEN = "e2e-serve-token";
/**
 * @typedef {import("openai/resources/chat/completions").ChatCompletionMessageParam} ChatCompletionMessageParam
 * @typedef {import("openai/resources/chat/completions").ChatCompletionCreateParams} ChatCompletionCreateParams
 * @typedef {Awaited<ReturnType<typeof startRelayClient>>} RelayClient
 * @typedef {import("../support/switchyard-dev.mjs").ErrorBody} ErrorBody
 */

/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let client;
/** @type {RelayClient[]} */
let sessions = [];

before(async () => {
  // A long commit grace: the header assertions need the target known before the response commits,
  // even when a loaded machine relays the first event slowly.
  const dead = DEAD_UPSTREAM;
  proxy = await startSwitchyard({
    vars: {
      SERVE_TOKEN: TOKEN,
      SWITCHYARD_CONFIG: { models: { team: { targets: [{ kind: "llama", url: dead }, { kind: "browser", model: MODEL }] } }, timeouts: { commitMs: 3000 } },
    },
  });
  client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "not-needed-in-dev", maxRetries: 0 });
});

after(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  await proxy?.stop();
});

async function session(tokenDelayMs = 5) {
  const engine = new FakeEngine({ tokenDelayMs });
  engine.loaded = MODEL;
  const s = await startRelayClient({ baseUrl: proxy.url, token: TOKEN, models: [MODEL], engine });
  sessions.push(s);
  return s;
}

/**
 * A chat request for the team model, with `extra` fields.
 * @template {Partial<ChatCompletionCreateParams>} E
 * @param {string} content
 * @param {E} [extra]
 * @returns {{ model: string, messages: ChatCompletionMessageParam[] } & E}
 */
const ask = (content, extra = /** @type {E} */ ({})) => ({ model: "team", messages: [{ role: "system", content: "Be brief." }, { role: "user", content }], ...extra });

describe("a browser session serves the team when llama.cpp is down", () => {
  it("refuses anonymous and wrong credentials before the upgrade", async () => {
    assert.equal((await fetch(`${proxy.url}/v1/sessions/ticket`, { method: "POST" })).status, 401);
    assert.equal((await fetch(`${proxy.url}/v1/sessions/ticket`, { method: "POST", headers: { authorization: "Bearer wrong" } })).status, 403);
    const ws = new WebSocket(`${proxy.url.replace("http", "ws")}/v1/sessions?ticket=tk_nope`);
    const outcome = await new Promise((r) => { ws.onopen = () => r("open"); ws.onerror = () => r("refused"); });
    assert.equal(outcome, "refused");
  });

  it("no session yet: 503 no_capacity with Retry-After after trying llama.cpp", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ask("hi")) });
    assert.equal(res.status, 503);
    assert.ok(res.headers.get("retry-after"));
    assert.equal(/** @type {ErrorBody} */ (await res.json()).error.code, "no_capacity");
  });

  it("the openai client streams its answer from the session, target named", async () => {
    const s = await session();
    assert.equal(s.welcome.version, 1);
    const { data: stream, response } = await client.chat.completions.create(ask("echo: Served from a browser tab.", { stream: true, stream_options: { include_usage: true } })).withResponse();
    assert.equal(response.headers.get("x-switchyard-target"), `browser:${MODEL}`);
    assert.equal(response.headers.get("x-switchyard-attempts"), "2");
    let text = "", finish, usage, ext;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      // Switchyard's own extension of the final chunk (docs/api.md).
      if (chunk.choices[0]?.finish_reason) { finish = chunk.choices[0].finish_reason; ext = /** @type {{ x_switchyard?: { target: string } }} */ (chunk).x_switchyard; }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "Served from a browser tab.");
    assert.equal(finish, "stop");
    assert.equal(ext?.target, `browser:${MODEL}`);
    assert.equal(usage?.completion_tokens, 5);
    // What the page received was adapted for web-llm.
    const adapted = /** @type {{ model: string, messages: unknown[] }} */ (s.stats.requests.at(-1)?.body);
    assert.deepEqual(adapted.messages[0], { role: "system", content: "Be brief." });
    assert.equal(adapted.model, MODEL);
  });

  it("non-stream through the openai client", async () => {
    const { data, response } = await client.chat.completions.create(ask("echo: One whole body.")).withResponse();
    assert.equal(data.choices[0].message.content, "One whole body.");
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.equal(response.headers.get("x-switchyard-target"), `browser:${MODEL}`);
  });

  it("12 concurrent requests over 3 sessions: each session runs one at a time, all answers exact", async () => {
    await session(); await session();
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const stream = await client.chat.completions.create(ask(`echo: concurrent answer ${i}`, { stream: true }));
        let t = "";
        for await (const c of stream) t += c.choices[0]?.delta?.content ?? "";
        return t;
      }),
    );
    assert.deepEqual(answers, Array.from({ length: 12 }, (_, i) => `concurrent answer ${i}`));
    for (const s of sessions) assert.ok(s.stats.maxRunning <= 1, "one running request per session");
    assert.ok(sessions.filter((s) => s.stats.served > 0).length >= 2, "spread over sessions");
  });

  it("a client that leaves mid-stream interrupts the generation in the session", async () => {
    for (const s of sessions.splice(0)) await s.close();
    const s = await session(30);
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ");
    const ac = new AbortController();
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", signal: ac.signal, headers: { "content-type": "application/json" }, body: JSON.stringify(ask(`echo: ${words}`, { stream: true })) });
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    await reader.read();
    ac.abort();
    const deadline = Date.now() + 5000;
    while (s.stats.cancels.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.stats.cancels.length, 1);
    // The engine drained and is free: the next request is answered.
    const after = await client.chat.completions.create(ask("echo: still serving"));
    assert.equal(after.choices[0].message.content, "still serving");
  });

  it("a session that drops mid-stream ends the stream with an error frame", async () => {
    for (const s of sessions.splice(0)) await s.close();
    const s = await session(40);
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ");
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ask(`echo: ${words}`, { stream: true })) });
    const reading = readSse(res);
    await new Promise((r) => setTimeout(r, 300));
    await s.close();
    const sse = await reading;
    assert.equal(sse.done, false);
    assert.match(sse.frames.at(-1).error.message, /disconnected/);
    assert.ok(!sse.frames.some((f) => f.choices?.[0]?.finish_reason));
  });
});

describe("completions and embeddings from browser sessions when llama.cpp is down", () => {
  const EMBED = "snowflake-arctic-embed-s-q0f32-MLC-b4";
  /** @type {import("../support/switchyard-dev.mjs").Switchyard} */
  let proxy2;
  /** @type {OpenAI} */
  let client2;
  /** @type {RelayClient[]} */
  const mine = [];

  before(async () => {
    const dead = DEAD_UPSTREAM;
    proxy2 = await startSwitchyard({
      vars: {
        SERVE_TOKEN: TOKEN,
        SWITCHYARD_CONFIG: {
          models: {
            team: { targets: [{ kind: "llama", url: dead }, { kind: "browser", model: MODEL }] },
            embed: { targets: [{ kind: "llama", url: dead }, { kind: "browser", model: EMBED }] },
            "chat-only-embed": { targets: [{ kind: "browser", model: MODEL }] },
          },
          timeouts: { commitMs: 3000 },
        },
      },
    });
    client2 = new OpenAI({ baseURL: `${proxy2.url}/v1`, apiKey: "not-needed-in-dev", maxRetries: 0 });
    const chat = new FakeEngine({ tokenDelayMs: 5 });
    chat.loaded = MODEL;
    mine.push(await startRelayClient({ baseUrl: proxy2.url, token: TOKEN, models: [MODEL], engine: chat }));
    const emb = new FakeEngine({ tokenDelayMs: 5 });
    emb.loaded = EMBED;
    mine.push(await startRelayClient({ baseUrl: proxy2.url, token: TOKEN, models: [EMBED], engine: emb, embeddingModels: [EMBED] }));
  });

  after(async () => {
    await Promise.all(mine.map((s) => s.close().catch(() => {})));
    await proxy2?.stop();
  });

  it("openai completions.create, stream and non-stream, from the session's engine.completions", async () => {
    const { data, response } = await client2.completions.create({ model: "team", prompt: "echo: Text from a tab.", max_tokens: 20 }).withResponse();
    assert.equal(response.headers.get("x-switchyard-target"), `browser:${MODEL}`);
    assert.equal(data.object, "text_completion");
    assert.equal(data.choices[0].text, "Text from a tab.");
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.equal(data.usage?.completion_tokens, 4);
    assert.equal(mine[0].stats.requests.at(-1)?.endpoint, "completions");

    const stream = await client2.completions.create({ model: "team", prompt: "echo: Streamed text here.", stream: true, stream_options: { include_usage: true } });
    let text = "", finish, usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "Streamed text here.");
    assert.equal(finish, "stop");
    assert.equal(usage?.completion_tokens, 3);
  });

  it("openai embeddings.create from the session with an embedding model", async () => {
    const { data, response } = await client2.embeddings.create({ model: "embed", input: ["first text", "second text"] }).withResponse();
    assert.equal(response.headers.get("x-switchyard-target"), `browser:${EMBED}`);
    assert.equal(data.object, "list");
    assert.equal(data.model, "embed");
    assert.equal(data.data.length, 2);
    // The client asks for base64 by default and decodes it: the Worker encodes web-llm's floats.
    assert.equal(data.data[0].embedding.length, 384);
    const expected = fakeEmbedding("first text", 384);
    data.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - expected[i]) < 1e-6));
    assert.deepEqual(data.usage, { prompt_tokens: 4, total_tokens: 4 });
    const req = mine[1].stats.requests.at(-1);
    assert.equal(req?.endpoint, "embeddings");
    assert.deepEqual(req?.body, { model: EMBED, input: ["first text", "second text"] });

    const floats = await client2.embeddings.create({ model: "embed", input: "first text", encoding_format: "float" });
    assert.deepEqual(floats.data[0].embedding, expected);
  });

  it("a model whose sessions have only chat models: embeddings skip them (503 no_capacity)", async () => {
    const res = await fetch(`${proxy2.url}/v1/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "chat-only-embed", input: "x" }) });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("x-switchyard-attempts"), "0");
    assert.equal(/** @type {ErrorBody} */ (await res.json()).error.code, "no_capacity");
  });
});
