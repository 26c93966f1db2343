// The admission queue in the simplest setup (issue 26, finding 7): one real llama-server with one
// slot (`-np 1 -t 1 --poll 0`, 8,192 tokens of context), the first request ever holding it with a
// long answer (ignore_eos, max_tokens 8000: about a minute of the tiny model on 2 shared cores),
// `queue.maxWaitMs: 2000`, through `wrangler dev`. A second request, of another
// key, must wait in Switchyard's line and end `503 no_capacity` after about 2 s, without ever
// reaching the server: a recorder (test/support/http-tap.mjs) between Switchyard and llama-server
// sees every request that reaches it. Nothing is warmed up: no health sample exists yet.
//   node --test test/e2e/admission-one-slot-llama.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startLlamaServer } from "../support/llama-server.mjs";
import { startSwitchyard, createChatKey } from "../support/switchyard-dev.mjs";
import { startTap } from "../support/http-tap.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {Awaited<ReturnType<typeof startTap>>} */
let tap;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  llama = await startLlamaServer({ parallel: 1, threads: 1, ctx: 8192, args: ["--poll", "0"] });
  tap = await startTap(llama.url);
  proxy = await startSwitchyard({
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `e2e-q1-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: { one: { targets: [{ kind: "llama", url: tap.url }] } },
        queue: { maxWaitMs: 2000 },
        // A commit grace longer than the wait, so the refusal keeps its status.
        timeouts: { commitMs: 5000 },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await tap?.close();
  await llama?.stop();
});

/** @param {string} name */
const createKey = (name) => createChatKey(proxy.url, ADMIN_TOKEN, name);

/** The chat requests that reached llama-server (through the recorder), by their user message. */
const reached = () => tap.exchanges().filter((e) => e.path?.endsWith("/chat/completions")).map((e) => JSON.parse(e.request).messages.at(-1).content);

/** @param {string} key @param {Record<string, unknown>} body @param {AbortSignal} [signal] */
const chat = (key, body, signal) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "one", temperature: 0, ...body }),
    ...(signal ? { signal } : {}),
  });

describe("admission queue before a real one-slot llama-server, from the first request", () => {
  it("a second request while a long answer holds the slot waits in Switchyard's line, never reaches the server, and ends 503 no_capacity at ~2 s", { timeout: 120_000 }, async () => {
    const [a, b] = [await createKey("a"), await createKey("b")];
    // The first request ever: a long answer that holds the only slot.
    const holder = new AbortController();
    const long = await chat(a, { stream: true, max_tokens: 8000, ignore_eos: true, messages: [{ role: "user", content: "hold the slot" }] }, holder.signal);
    assert.equal(long.status, 200);
    const reader = /** @type {ReadableStreamDefaultReader<Uint8Array>} */ (long.body?.getReader());
    const decoder = new TextDecoder();
    for (let seen = ""; !seen.includes("data: {"); ) seen += decoder.decode((await reader.read()).value);
    assert.deepEqual(reached(), ["hold the slot"]);
    // Keep reading it, as a client would; the server keeps generating.
    const drain = (async () => {
      try {
        while (!(await reader.read()).done);
      } catch {}
    })();

    const startedAt = Date.now();
    const res = await chat(b, { max_tokens: 8, messages: [{ role: "user", content: "second" }] }, AbortSignal.timeout(15_000)).catch((e) => e);
    const waited = Date.now() - startedAt;
    const body = res instanceof Response ? await res.text() : String(res);
    console.log(`second request after ${waited} ms: ${res instanceof Response ? res.status : "no answer"} ${body.slice(0, 300)}; reached the server: ${JSON.stringify(reached())}`);
    assert.ok(res instanceof Response, `no answer within 15 s (${body})`);
    assert.equal(res.status, 503, body);
    assert.equal(JSON.parse(body).error.code, "no_capacity");
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
    assert.ok(waited >= 1500 && waited < 6000, `waited ${waited} ms`);
    assert.deepEqual(reached(), ["hold the slot"]);
    // The slot was held by the long answer all along: llama-server has it processing still.
    const slots = /** @type {Array<{ is_processing: boolean }>} */ (await (await fetch(`${llama.url}/slots`)).json());
    assert.equal(slots.filter((s) => s.is_processing).length, 1);

    // Once the long answer is gone, the line moves again: the next request is served.
    holder.abort();
    await drain;
    await new Promise((r) => setTimeout(r, 500));
    const after = await chat(b, { max_tokens: 4, messages: [{ role: "user", content: "after" }] });
    assert.equal(after.status, 200, await after.clone().text());
    await after.text();
    assert.deepEqual(reached(), ["hold the slot", "after"]);
  });
});
