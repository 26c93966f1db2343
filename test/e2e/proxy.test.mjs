// End to end: `wrangler dev` as the launcher runs it (real workerd) in front of a real llama-server, driven by
// the official `openai` client and by raw fetch where the wire itself is under test.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startLlamaServer } from "../support/llama-server.mjs";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { grammar, readSse, startSwitchyard } from "../support/switchyard-dev.mjs";

/**
 * @typedef {import("openai/resources/chat/completions").ChatCompletionMessageParam} ChatCompletionMessageParam
 * @typedef {import("openai/resources/chat/completions").ChatCompletionCreateParams} ChatCompletionCreateParams
 * @typedef {import("../support/llama-server.mjs").LlamaServer} LlamaServer
 */

/** @type {LlamaServer} */
let llama;
/** @type {LlamaServer} */
let victim;
/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let client;

before(async () => {
  [llama, victim, fixtures] = await Promise.all([
    startLlamaServer({ parallel: 4, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1"] }),
    startFixtureUpstream(),
  ]);
  const f = (/** @type {string} */ path) => ({ targets: [{ kind: "llama", url: `${fixtures.url}/${path}` }] });
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          tiny: { targets: [{ kind: "llama", url: llama.url }] },
          victim: { targets: [{ kind: "llama", url: victim.url }] },
          "dead-then-tiny": { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }, { kind: "llama", url: llama.url }] },
          endless: f("behave/endless"),
        },
      },
    },
  });
  client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "not-needed-in-dev", maxRetries: 0 });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([llama?.stop(), victim?.stop(), fixtures?.close()]);
});

/**
 * A request for the tiny model, with `extra` fields (llama-server's `grammar` passes through).
 * @template {Partial<ChatCompletionCreateParams> & { grammar?: string }} E
 * @param {E} [extra]
 * @returns {{ model: string, messages: ChatCompletionMessageParam[], temperature: number, max_tokens: number } & E}
 */
const base = (extra = /** @type {E} */ ({})) => ({ model: "tiny", messages: [{ role: "user", content: "Say it." }], temperature: 0, max_tokens: 120, ...extra });

describe("the official openai client", () => {
  it("non-stream: exact text, usage, target named", async () => {
    const { data, response } = await client.chat.completions.create(base({ grammar: grammar("The proxy works end to end.") })).withResponse();
    assert.equal(data.choices[0].message.content, "The proxy works end to end.");
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.equal(data.model, "tiny");
    assert.ok(/** @type {NonNullable<typeof data.usage>} */ (data.usage).completion_tokens > 0);
    // The body's x_switchyard always names the target; the header only when the answer began within
    // the commit grace (docs/api.md), which a loaded machine does not always give.
    const ext = /** @type {{ x_switchyard?: { target: string } }} */ (/** @type {unknown} */ (data)).x_switchyard;
    assert.match(ext?.target ?? "", /^llama:127\.0\.0\.1:\d+$/);
    const header = response.headers.get("x-switchyard-target");
    if (header) assert.equal(header, ext?.target);
  });

  it("stream: deltas add up to the exact text, usage last", async () => {
    const want = "Streaming through wrangler dev: ünïcödé ✓";
    const stream = await client.chat.completions.create(base({ stream: true, stream_options: { include_usage: true }, grammar: grammar(want) }));
    let got = "";
    /** @type {import("openai/resources/completions").CompletionUsage | undefined} */
    let usage;
    let finish;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      got += chunk.choices[0]?.delta?.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason ?? undefined;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(got, want);
    assert.equal(finish, "stop");
    assert.ok(/** @type {NonNullable<typeof usage>} */ (usage).completion_tokens > 0);
    assert.ok(chunks > 5);
  });

  it("typed errors: unknown model → NotFoundError with code model_not_found", async () => {
    await assert.rejects(client.chat.completions.create(base({ model: "no-such-model" })), (e) => {
      assert.ok(e instanceof OpenAI.NotFoundError);
      assert.equal(e.status, 404);
      assert.equal(e.code, "model_not_found");
      return true;
    });
  });

  it("typed errors: a bad request → BadRequestError with param", async () => {
    // @ts-expect-error: `messages` is deliberately a string, which the proxy must refuse
    await assert.rejects(client.chat.completions.create({ model: "tiny", messages: "hello" }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, "invalid_type");
      assert.equal(e.param, "messages");
      return true;
    });
  });

  it("fails over from a dead upstream before the first byte", async () => {
    const { data, response } = await client.chat.completions.create(base({ model: "dead-then-tiny", grammar: grammar("second") })).withResponse();
    assert.equal(data.choices[0].message.content, "second");
    assert.equal(/** @type {{ x_switchyard: { attempts: number } }} */ (/** @type {unknown} */ (data)).x_switchyard.attempts, 2);
    // The header too, when the answer came before the commit grace ran out (docs/api.md: a failover
    // slower than timeouts.commitMs, as on a loaded machine, commits before the target is known).
    const header = response.headers.get("x-switchyard-attempts");
    if (header !== null) assert.equal(header, "2");
  });
});

describe("under load", () => {
  it("50 concurrent streams all arrive whole", async () => {
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const want = `Concurrent stream ${i}.`;
        const res = await fetch(`${proxy.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(base({ stream: true, grammar: grammar(want) })),
        });
        const { frames, done } = await readSse(res);
        const text = frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
        return { ok: text === want && done && res.status === 200, text };
      }),
    );
    const failed = results.filter((r) => !r.ok);
    assert.equal(failed.length, 0, JSON.stringify(failed.slice(0, 3)));
    console.log(`# 50 concurrent streams through wrangler dev to llama-server (-np 4): ${Date.now() - started} ms`);
  });
});

describe("a client that leaves", () => {
  /**
   * @param {string} requestId
   * @param {number} abortedAt
   */
  async function closedWithin(requestId, abortedAt) {
    for (let i = 0; i < 40; i++) {
      const closed = /** @type {Array<{ requestId: string, at: number }>} */ (await (await fetch(`${fixtures.url}/_closed`)).json());
      const hit = closed.find((c) => c.requestId === requestId);
      if (hit) return hit.at - abortedAt;
      await new Promise((r) => setTimeout(r, 100));
    }
    return Infinity;
  }

  for (const stream of [true, false]) {
    it(`stops the upstream within 1 s (${stream ? "stream" : "non-stream"})`, async () => {
      const requestId = `abort-${stream ? "s" : "n"}-${Date.now()}`;
      const ac = new AbortController();
      const res = fetch(`${proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": requestId },
        body: JSON.stringify({ model: "endless", stream, messages: [{ role: "user", content: "go on forever" }] }),
        signal: ac.signal,
      });
      if (stream) {
        const r = await res;
        const reader = /** @type {ReadableStream<Uint8Array>} */ (r.body).getReader();
        await reader.read();
      } else {
        res.catch(() => {});
        await new Promise((r) => setTimeout(r, 1500)); // past the commit grace period
      }
      const abortedAt = Date.now();
      ac.abort();
      const ms = await closedWithin(requestId, abortedAt);
      console.log(`# ${stream ? "stream" : "non-stream"}: upstream connection closed ${ms} ms after the client left`);
      assert.ok(ms <= 1000, `upstream closed after ${ms} ms`);
    });
  }

  it("frees the real llama-server's slot", async () => {
    // ~1,750 tokens: still being written after the first frames arrive.
    const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
    const ac = new AbortController();
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...base({ stream: true, max_tokens: 1900, grammar: grammar(long) }), model: "victim" }),
      signal: ac.signal,
    });
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    await reader.read();
    await reader.read();
    /** @typedef {Array<{ is_processing: boolean }>} Slots llama-server's GET /slots */
    const busy = /** @type {Slots} */ (await (await fetch(`${victim.url}/slots`)).json());
    assert.equal(busy.some((s) => s.is_processing), true);
    const abortedAt = Date.now();
    ac.abort();
    let freedAfter = Infinity;
    for (let i = 0; i < 50; i++) {
      const slots = /** @type {Slots} */ (await (await fetch(`${victim.url}/slots`)).json());
      if (!slots.some((s) => s.is_processing)) {
        freedAfter = Date.now() - abortedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`# llama-server slot freed ${freedAfter} ms after the client left`);
    assert.ok(freedAfter < 2500, `slot still busy after ${freedAfter} ms`);
  });
});

describe("llama-server killed mid-stream", () => {
  it("ends the stream with an error frame, no [DONE], no finish_reason", async () => {
    // ~1,750 tokens, ~1.9 s of generation here alone: still being written when the first frame arrives.
    const long = Array.from({ length: 400 }, (_, i) => `k${i}`).join(" ");
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...base({ stream: true, max_tokens: 1900, grammar: grammar(long) }), model: "victim" }),
    });
    assert.equal(res.status, 200);
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    const first = await reader.read();
    victim.kill("SIGKILL");
    let raw = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += new TextDecoder().decode(value);
    }
    const frames = raw.split("\n\n").filter((b) => b.startsWith("data: ")).map((b) => b.slice(6));
    assert.ok(!frames.includes("[DONE]"));
    const last = JSON.parse(/** @type {string} */ (frames.at(-1)));
    assert.equal(last.error.code, "upstream_error");
    assert.ok(!frames.some((f) => f !== "[DONE]" && JSON.parse(f).choices?.[0]?.finish_reason));
  });

  it("then, its only server down moments after it answered, the next request waits in line and the restarted server serves it (a stream on keep-alives)", async () => {
    const askedAt = Date.now();
    const pending = fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...base({ stream: true, grammar: grammar("restarted") }), model: "victim" }),
    });
    await new Promise((r) => setTimeout(r, 1200));
    victim = await startLlamaServer({ port: victim.port, parallel: 1, args: ["-t", "1"] });
    const res = await pending;
    assert.equal(res.status, 200);
    const raw = await res.text();
    const waited = Date.now() - askedAt;
    const frames = raw.split("\n\n").filter((b) => b.startsWith("data: ")).map((b) => b.slice(6));
    assert.equal(frames.at(-1), "[DONE]", raw.slice(-500));
    const text = frames.slice(0, -1).map((f) => JSON.parse(f).choices?.[0]?.delta?.content ?? "").join("");
    assert.equal(text, "restarted");
    assert.ok(waited >= 1200, `answered ${waited} ms after it was asked, before the restart`);
  });
});
