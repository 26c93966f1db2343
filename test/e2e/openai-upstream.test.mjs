// The `"kind": "openai"` upstream end to end against a real OpenAI-compatible server that is not
// llama-server: Portkey's open-source gateway (its `openai` provider, with its own two headers) in
// front of a real llama-server that wants an API key, under wrangler dev. An http-tap between
// Switchyard and the gateway records every request, to show that only OpenAI's endpoints are asked.
//
// Portkey forwards only OpenAI's own body fields, so llama.cpp's `grammar` cannot pin the tiny random
// model's output here: a `response_format` json_schema with one possible value does (llama-server turns
// it into a grammar), and the prompt-mode tool call is pinned by an `enum` in the tool's parameters.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startTap } from "../support/http-tap.mjs";
import { DEAD_UPSTREAM, freePort, startLlamaServer } from "../support/llama-server.mjs";
import { readSse, startSwitchyard } from "../support/switchyard-dev.mjs";

const KEY = "llama-key-behind-portkey-0123";
const ALLOWED = new Set(["POST /v1/chat/completions", "POST /v1/completions", "POST /v1/embeddings", "GET /v1/models"]);
const LLAMA_ONLY = /\/(props|slots|tokenize|detokenize|apply-template|health|metrics)\b/;

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {{ url: string, stop(): Promise<void> }} */
let portkey;
/** @type {Awaited<ReturnType<typeof startTap>>} */
let tap;
/** @type {{ url: string, received: string[], close(): Promise<void> }} */
let breaking;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

/** Portkey's gateway on Node (`build/start-server.js --headless`), on a free port. */
async function startPortkey() {
  const port = await freePort();
  const main = new URL("../../node_modules/@portkey-ai/gateway/build/start-server.js", import.meta.url).pathname;
  const child = spawn(process.execPath, [main, `--port=${port}`, "--headless"], { detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr?.on("data", (b) => (err = (err + b).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`Portkey's gateway exited (${child.exitCode}):\n${err}`);
    try {
      await (await fetch(`${url}/`)).arrayBuffer();
      return { url, stop };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await stop();
  throw new Error(`Portkey's gateway did not answer on ${url}:\n${err}`);
}

/**
 * An OpenAI-compatible server that writes two deltas and then drops the connection: the first target
 * of the model whose answer is continued on the gateway. Its model list answers, so it is healthy.
 */
async function startBreakingServer() {
  /** @type {string[]} */
  const received = [];
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    received.push(`${req.method} ${req.url}`);
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model" }] }));
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (/** @type {object} */ delta) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    res.write(chunk({ role: "assistant", content: "" }) + chunk({ content: "Par" }));
    setTimeout(() => req.socket.destroy(), 50);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve(undefined)))),
  };
}

/** @param {Record<string, unknown>} [extra] an openai target through the tap and the gateway to llama-server */
const viaPortkey = (extra = {}) => ({
  kind: "openai",
  url: tap.url,
  apiKeySecret: "PORTKEY_UPSTREAM_KEY",
  headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": `${llama.url}/v1` },
  ...extra,
});

before(async () => {
  llama = await startLlamaServer({ parallel: 2, apiKey: KEY, args: ["--embeddings", "--pooling", "mean"] });
  portkey = await startPortkey();
  tap = await startTap(portkey.url);
  breaking = await startBreakingServer();
  const dead = DEAD_UPSTREAM;
  const config = {
    models: {
      pk: { targets: [viaPortkey({ model: "switchyard-tiny" })] },
      "pk-prompt": { targets: [viaPortkey({ tools: "prompt" })] },
      failover: { targets: [{ kind: "openai", url: dead }, viaPortkey()] },
      resume: { targets: [{ kind: "openai", url: breaking.url }, viaPortkey({ prefill: "assistant" })] },
    },
    health: { sampleMs: 200 },
  };
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: config, PORTKEY_UPSTREAM_KEY: KEY } });
});

after(async () => {
  await proxy?.stop();
  await breaking?.close();
  await tap?.close();
  await portkey?.stop();
  await llama?.stop();
});

/** @param {Record<string, unknown>} body */
const post = (body, path = "/v1/chat/completions") => fetch(`${proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** A reply pinned to one JSON object (llama-server's grammar from the schema). */
const PINNED = {
  type: "json_schema",
  json_schema: { name: "greeting", schema: { type: "object", properties: { answer: { const: "Hello from Portkey" } }, required: ["answer"], additionalProperties: false } },
};
const chat = (/** @type {Record<string, unknown>} */ extra = {}) => ({ model: "pk", messages: [{ role: "user", content: "Say hello." }], temperature: 0, max_tokens: 60, response_format: PINNED, ...extra });

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris"] } }, required: ["city"], additionalProperties: false },
    },
  },
];

/** @typedef {{ x_switchyard: { target: string, attempts: number } }} Extension */

describe("chat through Portkey's gateway", () => {
  it("non-stream: the pinned answer, usage, the target named openai:<host>, the model mapped, the key passed on", async () => {
    const res = await post(chat());
    assert.equal(res.status, 200, await res.clone().text());
    const body = /** @type {{ model: string, choices: Array<{ message: { content: string }, finish_reason: string }>, usage: { completion_tokens: number } } & Extension} */ (await res.json());
    assert.deepEqual(JSON.parse(body.choices[0].message.content), { answer: "Hello from Portkey" });
    assert.equal(body.choices[0].finish_reason, "stop");
    assert.equal(body.model, "pk");
    assert.ok(body.usage.completion_tokens > 0);
    assert.equal(body.x_switchyard.target, `openai:${new URL(tap.url).host}`);
    const sent = tap.exchanges().find((x) => x.path === "/v1/chat/completions");
    assert.ok(sent, "the gateway was asked");
    const upstreamBody = JSON.parse(sent.request);
    assert.equal(upstreamBody.model, "switchyard-tiny");
    assert.equal(upstreamBody.stream, true);
    assert.deepEqual(upstreamBody.stream_options, { include_usage: true });
  });

  it("stream: deltas add up to the pinned answer, a finish, usage, [DONE]", async () => {
    const res = await post(chat({ stream: true, stream_options: { include_usage: true } }));
    assert.equal(res.status, 200);
    const { frames, done } = await readSse(res);
    const text = frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
    assert.deepEqual(JSON.parse(text), { answer: "Hello from Portkey" });
    assert.equal(frames.find((f) => f.choices?.[0]?.finish_reason)?.choices[0].finish_reason, "stop");
    assert.ok(frames.some((f) => f.usage?.completion_tokens > 0));
    assert.ok(done);
  });

  for (const stream of [false, true]) {
    it(`a tool call written as text (tools: "prompt") comes back as tool_calls (${stream ? "stream" : "non-stream"})`, async () => {
      const res = await post({ model: "pk-prompt", messages: [{ role: "user", content: "Weather in Paris?" }], tools, tool_choice: "required", parallel_tool_calls: false, temperature: 0, max_tokens: 300, stream });
      assert.equal(res.status, 200, await res.clone().text());
      /** @type {string | undefined} */
      let finish;
      /** @type {Array<{ name: string, arguments: string }>} */
      const calls = [];
      if (stream) {
        for (const f of (await readSse(res)).frames) {
          finish ??= f.choices?.[0]?.finish_reason ?? undefined;
          for (const tc of f.choices?.[0]?.delta?.tool_calls ?? []) {
            calls[tc.index] ??= { name: "", arguments: "" };
            if (tc.function?.name) calls[tc.index].name = tc.function.name;
            calls[tc.index].arguments += tc.function?.arguments ?? "";
          }
        }
      } else {
        const body = /** @type {{ choices: Array<{ finish_reason: string, message: { tool_calls: Array<{ function: { name: string, arguments: string } }> } }> }} */ (await res.json());
        finish = body.choices[0].finish_reason;
        calls.push(...body.choices[0].message.tool_calls.map((tc) => tc.function));
      }
      assert.equal(finish, "tool_calls");
      assert.equal(calls.length, 1);
      assert.equal(calls[0].name, "get_weather");
      assert.deepEqual(JSON.parse(calls[0].arguments), { city: "Paris" });
      // The tools went into the prompt and the reply was constrained by a json_schema response_format.
      const sent = JSON.parse(tap.exchanges().filter((x) => x.path === "/v1/chat/completions").at(-1)?.request ?? "{}");
      assert.equal(sent.tools, undefined);
      assert.equal(sent.response_format?.type, "json_schema");
    });
  }
});

describe("the other endpoints", () => {
  it("completions: a text completion with usage", async () => {
    const res = await post({ model: "pk", prompt: "Once upon a time", max_tokens: 5, temperature: 0 }, "/v1/completions");
    assert.equal(res.status, 200, await res.clone().text());
    const body = /** @type {{ object: string, choices: Array<{ text: string, finish_reason: string }>, usage: { completion_tokens: number } }} */ (await res.json());
    assert.equal(body.object, "text_completion");
    assert.equal(typeof body.choices[0].text, "string");
    assert.ok(["stop", "length"].includes(body.choices[0].finish_reason));
    assert.ok(body.usage.completion_tokens >= 1 && body.usage.completion_tokens <= 5);
  });

  it("embeddings: the server's vectors", async () => {
    const res = await post({ model: "pk", input: ["hello", "world"] }, "/v1/embeddings");
    assert.equal(res.status, 200, await res.clone().text());
    const body = /** @type {{ data: Array<{ embedding: number[], index: number }> }} */ (await res.json());
    assert.equal(body.data.length, 2);
    assert.equal(body.data[0].embedding.length, 64);
  });
});

describe("failover and continuation", () => {
  it("fails over from a dead openai target to the gateway before the first byte", async () => {
    const res = await post(chat({ model: "failover" }));
    assert.equal(res.status, 200, await res.clone().text());
    const body = /** @type {{ choices: Array<{ message: { content: string } }> } & Extension} */ (await res.json());
    assert.deepEqual(JSON.parse(body.choices[0].message.content), { answer: "Hello from Portkey" });
    assert.equal(body.x_switchyard.attempts, 2);
    assert.equal(body.x_switchyard.target, `openai:${new URL(tap.url).host}`);
  });

  it("an answer broken mid-stream is continued on the gateway's server (prefill: assistant)", async () => {
    // Three tokens: "Par" spent one, so the continuation may write two. More, and the tiny model's
    // unconstrained output ("Par(fn…") fails llama-server's final chat parse (a 500 error frame); the
    // gateway forwards no `grammar` to pin it.
    const res = await post({ model: "resume", messages: [{ role: "user", content: "Name a city." }], temperature: 0, max_tokens: 3, stream: true });
    assert.equal(res.status, 200);
    const { frames, done, raw } = await readSse(res);
    const text = frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
    assert.ok(done, raw);
    assert.equal(frames.find((f) => f.choices?.[0]?.finish_reason)?.choices[0].finish_reason, "length");
    assert.ok(text.startsWith("Par") && text.length > 3, `continued after "Par": ${JSON.stringify(text)}`);
    assert.ok(!text.startsWith("ParPar"), "the prefill is not repeated");
    assert.ok(breaking.received.includes("POST /v1/chat/completions"));
    const continued = JSON.parse(tap.exchanges().filter((x) => x.path === "/v1/chat/completions").at(-1)?.request ?? "{}");
    assert.deepEqual(continued.messages.at(-1), { role: "assistant", content: "Par" });
  });
});

describe("what the gateway was asked", () => {
  it("health is GET /v1/models, with the gateway's headers (it answers 400 without them)", async () => {
    // A probe on its way as the test looks has no status yet (0), and one Switchyard gave up on (its
    // probe timeout, on a loaded machine) was never answered by the gateway (`lost`): only the
    // gateway's answers are judged.
    const answered = () => tap.exchanges().filter((x) => x.method === "GET" && x.path === "/v1/models" && x.status !== 0 && !x.lost);
    const deadline = Date.now() + 15_000;
    while (answered().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const probes = answered();
    assert.ok(probes.length > 0, "the health hub probed the gateway");
    assert.ok(probes.every((x) => x.status === 200), JSON.stringify(probes.map((x) => x.status)));
  });

  it("nothing but OpenAI's endpoints: never /props, /slots, /tokenize, /detokenize, /apply-template, /health or /metrics", () => {
    const asked = tap.exchanges().map((x) => `${x.method} ${x.path}`);
    assert.deepEqual(asked.filter((a) => LLAMA_ONLY.test(a)), []);
    assert.deepEqual([...new Set(asked)].filter((a) => !ALLOWED.has(a)), []);
    assert.deepEqual(breaking.received.filter((a) => LLAMA_ONLY.test(a)), []);
  });
});
