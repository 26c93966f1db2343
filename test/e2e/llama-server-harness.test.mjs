// Checks the llama-server test harness against the real server and the tiny random-weight model:
// literal grammars give exact text (stream and non-stream), max_tokens cuts with "length", the
// server starts/stops cleanly. Run: npx node --test test/e2e/llama-server-harness.test.mjs
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ensureLlamaServer,
  ensureTestModel,
  literalGrammar,
  parseSse,
  startLlamaServer,
} from "../support/llama-server.mjs";

/**
 * llama-server's answers, as far as these checks read them.
 * @typedef {{ object: string, choices: Array<{ message: { content: string, tool_calls?: unknown }, finish_reason: string }>, usage: { completion_tokens: number } }} LlamaCompletion
 * @typedef {{ chat_template_caps: { supports_tool_calls: boolean, supports_tools: boolean }, total_slots: number, chat_template: string }} LlamaProps
 * @typedef {{ data: Array<{ meta: { n_ctx: number } }> }} LlamaModels
 * @typedef {{ error: { type: string, message: string } }} LlamaError
 */

const TEXTS = {
  ascii: "Hello from Switchyard! The quick brown fox jumps over the lazy dog.",
  // ≈130 tokens as a tokenizer would split it; the grammar-constrained random model picks shorter
  // pieces (≈2 characters per token), so ≈300 generated tokens, within the 512-token slot.
  long: Array.from(
    { length: 4 },
    (_, i) =>
      `Paragraph ${i + 1}: Switchyard proxies OpenAI-compatible requests to llama.cpp servers and browser sessions, rewriting tool calls where needed.`,
  ).join("\n"),
  nonAscii: "Grüße, 世界 👋",
  toolMarkup: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
};

/**
 * @param {string} text
 * @param {Record<string, unknown>} [extra]
 */
function chatBody(text, extra = {}) {
  return {
    messages: [{ role: "user", content: "Say the text." }],
    grammar: literalGrammar(text),
    temperature: 0,
    max_tokens: 200,
    ...extra,
  };
}

/**
 * @param {string} url
 * @param {Record<string, unknown>} body
 */
async function post(url, body) {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/**
 * Streams a chat completion; returns the parsed events plus per-chunk arrival times.
 * @param {string} url
 * @param {Record<string, unknown>} body
 */
async function streamChat(url, body) {
  const t0 = performance.now();
  const res = await post(url, { ...body, stream: true, stream_options: { include_usage: true } });
  if (res.status !== 200) assert.fail(`HTTP ${res.status}: ${await res.text()}`);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const decoder = new TextDecoder();
  let raw = "";
  /** @type {number[]} */
  const contentTimes = [];
  for await (const chunk of /** @type {ReadableStream<Uint8Array>} */ (res.body)) {
    raw += decoder.decode(chunk, { stream: true });
    // count content deltas as they arrive
    const n = (raw.match(/"content":"/g) ?? []).length;
    while (contentTimes.length < n) contentTimes.push(performance.now() - t0);
  }
  const events = parseSse(raw);
  const data = events.filter((e) => e.json);
  const content = data.map((e) => e.json.choices?.[0]?.delta?.content ?? "").join("");
  const finish = data.map((e) => e.json.choices?.[0]?.finish_reason).filter(Boolean);
  const usage = data.find((e) => e.json.usage)?.json;
  return { raw, events, data, content, finish, usage, contentTimes, totalMs: performance.now() - t0 };
}

describe("llama-server harness", () => {
  /** @type {Awaited<ReturnType<typeof startLlamaServer>>} */
  let srv;
  /** @type {number[]} */
  const speeds = [];

  before(async () => {
    const t0 = performance.now();
    srv = await startLlamaServer();
    console.log(`# llama-server ready in ${Math.round(performance.now() - t0)} ms at ${srv.url} (pid ${srv.pid})`);
  });

  after(async () => {
    if (speeds.length) console.log(`# stream speeds (content tokens/s): ${speeds.map((s) => s.toFixed(0)).join(", ")}`);
    await srv?.stop();
  });

  it("finds the binary and the model", () => {
    assert.ok(ensureLlamaServer());
    assert.match(ensureTestModel(), /\.gguf$/);
  });

  it("answers /health and /props with the tool-capable template", async () => {
    const health = await fetch(`${srv.url}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const props = /** @type {LlamaProps} */ (await (await fetch(`${srv.url}/props`)).json());
    assert.equal(props.chat_template_caps.supports_tool_calls, true);
    assert.equal(props.chat_template_caps.supports_tools, true);
    assert.equal(props.total_slots, 4);
    assert.match(props.chat_template, /<tool_call>/);
    const models = /** @type {LlamaModels} */ (await (await fetch(`${srv.url}/v1/models`)).json());
    assert.equal(models.data.length, 1);
    assert.equal(models.data[0].meta.n_ctx, 512, "-c 2048 -np 4 gives 512 per slot");
  });

  for (const [name, text] of Object.entries(TEXTS)) {
    const maxTokens = name === "long" ? 450 : 200;

    it(`returns the literal exactly, non-stream: ${name}`, async () => {
      const res = await post(srv.url, chatBody(text, { max_tokens: maxTokens }));
      assert.equal(res.status, 200);
      const body = /** @type {LlamaCompletion} */ (await res.json());
      assert.equal(body.object, "chat.completion");
      assert.equal(body.choices[0].message.content, text);
      assert.equal(body.choices[0].finish_reason, "stop");
      assert.equal(body.choices[0].message.tool_calls, undefined);
      assert.ok(body.usage.completion_tokens > 0);
    });

    it(`returns the literal exactly, stream: ${name}`, async () => {
      const r = await streamChat(srv.url, chatBody(text, { max_tokens: maxTokens }));
      assert.equal(r.content, text);
      assert.deepEqual(r.finish, ["stop"]);
      assert.equal(r.events.at(-1)?.data, "[DONE]");
      assert.deepEqual(r.usage.choices, []);
      const first = r.data[0].json;
      assert.deepEqual(first.choices[0].delta, { role: "assistant", content: null });
      assert.equal(first.object, "chat.completion.chunk");
      const ids = new Set(r.data.map((e) => e.json.id));
      assert.equal(ids.size, 1, "every chunk carries the same id");
      const n = r.usage.usage.completion_tokens;
      const t = r.usage.timings;
      // the generated tokens are t.predicted_n; with the grammar, the literal's own tokens
      assert.ok(n >= 1);
      if (name === "long") {
        const spread = /** @type {number} */ (r.contentTimes.at(-1)) - r.contentTimes[0];
        const perSec = ((r.contentTimes.length - 1) / spread) * 1000;
        speeds.push(perSec);
        console.log(
          `# long literal: ${text.length} chars, ${n} completion tokens, ${r.contentTimes.length} content deltas, ` +
            `first content after ${r.contentTimes[0].toFixed(0)} ms, ${perSec.toFixed(0)} deltas/s at the client, ` +
            `server predicted_per_second ${t.predicted_per_second.toFixed(0)}, total ${r.totalMs.toFixed(0)} ms`,
        );
      }
    });
  }

  it("is deterministic in chunk boundaries at temperature 0", async () => {
    const a = await streamChat(srv.url, chatBody(TEXTS.toolMarkup));
    const b = await streamChat(srv.url, chatBody(TEXTS.toolMarkup));
    const pieces = (/** @type {Awaited<ReturnType<typeof streamChat>>} */ r) => r.data.map((e) => e.json.choices?.[0]?.delta?.content).filter((c) => typeof c === "string");
    assert.deepEqual(pieces(a), pieces(b));
  });

  it("cuts with finish_reason length when max_tokens is smaller than the literal", async () => {
    const body = /** @type {LlamaCompletion} */ (await (await post(srv.url, chatBody(TEXTS.ascii, { max_tokens: 3 }))).json());
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(body.usage.completion_tokens, 3);
    const content = body.choices[0].message.content;
    assert.ok(content.length > 0 && TEXTS.ascii.startsWith(content) && content !== TEXTS.ascii, content);

    const r = await streamChat(srv.url, chatBody(TEXTS.ascii, { max_tokens: 3 }));
    assert.deepEqual(r.finish, ["length"]);
    assert.ok(TEXTS.ascii.startsWith(r.content) && r.content.length < TEXTS.ascii.length);
  });

  // Keep unconstrained output short: with this model and seed, free text beyond ≈60 tokens makes the
  // server's final parse fail with 500 "does not match the expected peg-native format".
  it("does not stop by itself without a grammar (end-of-generation logits are zeroed)", async () => {
    const res = await post(srv.url, {
      messages: [{ role: "user", content: "hi" }],
      temperature: 0,
      max_tokens: 16,
    });
    const body = /** @type {LlamaCompletion} */ (await res.json());
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(body.usage.completion_tokens, 16);
  });

  it("answers errors as plain HTTP JSON before streaming", async () => {
    const res = await post(srv.url, { ...chatBody("x"), stream: true, tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }], tool_choice: "bogus" });
    assert.equal(res.status, 400);
    const body = /** @type {LlamaError} */ (await res.json());
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /Invalid tool_choice: bogus/);
  });
});

describe("startLlamaServer lifecycle", () => {
  it("stop() terminates the process and frees the port", async () => {
    const srv = await startLlamaServer({ ctx: 512, parallel: 1, apiKey: "k1" });
    assert.equal((await fetch(`${srv.url}/health`)).status, 200);
    const denied = await fetch(`${srv.url}/v1/models`);
    assert.equal(denied.status, 401);
    const allowed = await fetch(`${srv.url}/v1/models`, { headers: { authorization: "Bearer k1" } });
    assert.equal(allowed.status, 200);
    await srv.stop();
    assert.throws(() => process.kill(/** @type {number} */ (srv.pid), 0), { code: "ESRCH" });
    await assert.rejects(fetch(`${srv.url}/health`));
    assert.match(srv.logs(), /server is listening|listening on/i);
  });

  it("rejects with the server log when the model cannot load", async () => {
    await assert.rejects(
      startLlamaServer({ model: "/nonexistent/model.gguf", readyTimeoutMs: 20_000 }),
      (/** @type {Error} */ err) => {
        assert.match(err.message, /exited .* before it was ready/);
        assert.match(err.message, /nonexistent\/model\.gguf/);
        return true;
      },
    );
  });
});

describe("llama fixtures (test/fixtures/llama)", async () => {
  const { readdirSync, readFileSync, existsSync } = await import("node:fs");
  const dir = new URL("../fixtures/llama/", import.meta.url);
  const metas = readdirSync(dir)
    .filter((f) => f.endsWith(".json") && !f.endsWith(".body.json"))
    .map((f) => JSON.parse(readFileSync(new URL(f, dir), "utf8")));
  const ENVELOPE = ["choices", "created", "id", "model", "system_fingerprint", "object"];
  // /v1/completions writes its chunks' id last, after the last one's usage (recorded: harmony-raw-tool-call).
  const COMPLETION_ENVELOPE = ["choices", "created", "model", "system_fingerprint", "object", "id"];

  it("every meta names an existing body, a status, a content type and a source", () => {
    assert.ok(metas.length >= 20);
    for (const m of metas) {
      assert.ok(existsSync(new URL(m.body, dir)), m.body);
      assert.equal(typeof m.status, "number");
      assert.match(m.content_type, /^(text\/event-stream|application\/json)/);
      assert.match(m.source, /^(recorded from llama-server b1-|hand-written from reference §)/);
      assert.ok(m.reproduces.length > 20);
    }
  });

  it("stream frames share one envelope (key order and id) per file", () => {
    for (const m of metas.filter((x) => x.body.endsWith(".sse"))) {
      const events = parseSse(readFileSync(new URL(m.body, dir), "utf8"));
      const chunks = events.map((e) => e.json).filter((j) => j && !j.error && j.object);
      for (const c of chunks) {
        const completion = c.object === "text_completion";
        assert.deepEqual(Object.keys(c).filter((k) => !completion || k !== "usage").slice(0, 6), completion ? COMPLETION_ENVELOPE : ENVELOPE, m.name);
        assert.equal(c.id, chunks[0].id, m.name);
      }
      for (const c of chunks) {
        for (const tc of c.choices[0]?.delta?.tool_calls ?? []) if (tc.id) assert.match(tc.id, /^[0-9A-Za-z]{32}$/);
      }
    }
  });

  it("the mid-stream error ends without [DONE] and the old error line is an `error:` field", () => {
    const mid = parseSse(readFileSync(new URL("stream-midstream-error-no-done.sse", dir), "utf8"));
    assert.equal(mid.at(-1)?.json.error.type, "server_error");
    assert.ok(!mid.some((e) => e.data === "[DONE]"));
    const old = parseSse(readFileSync(new URL("stream-old-error-line.sse", dir), "utf8"));
    assert.equal(old.at(-2)?.error !== undefined && old.at(-2)?.json.code, 500);
    assert.equal(old.at(-1)?.data, "[DONE]");
  });
});
