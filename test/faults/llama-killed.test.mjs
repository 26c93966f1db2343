// Fault: the real llama-server killed mid-answer, through `wrangler dev`, with the tiny model
// generating through a one-literal grammar (so both servers write the same text).
// - With a second llama-server for the model, the answer is continued there (src/routing/continuation/):
//   the official openai client, stream and non-stream, gets the exact full text, one id, a normal
//   finish, usage as for an uninterrupted answer, and `x_switchyard.resumes` naming both servers.
// - With no other target, or resume off for the model: the text so far, then one error frame (stream)
//   or a committed 200 whose body is the error envelope (non-stream); a second server in the plan
//   takes the next request, and with none the next request waits for the dead one to come back
//   (it was ready moments ago: restarting) and is served by it once restarted on its port.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

/** @typedef {import("../support/llama-server.mjs").LlamaServer} LlamaServer */
/** @type {LlamaServer[]} */
let servers = [];
/** @type {Record<"alone" | "streamed" | "held" | "noResume" | "spare" | "beforeClassic" | "classic", LlamaServer>} */
let s;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let openai;

before(async () => {
  // `classic`: a --no-jinja server, which closes the assistant turn instead of continuing it.
  // 4,096 tokens of context: room for `longer` (~2,150 tokens).
  servers = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => startLlamaServer({ parallel: 1, ctx: 4096, args: ["-t", "1", ...(i === 7 ? ["--no-jinja"] : [])] })));
  const [alone, streamed, held, noResume, spare, beforeClassic, classic] = /** @type {LlamaServer[]} */ (servers);
  s = { alone, streamed, held, noResume, spare, beforeClassic, classic };
  const llama = (/** @type {LlamaServer} */ x) => ({ kind: "llama", url: x.url });
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          alone: { targets: [llama(alone)] },
          streamed: { targets: [llama(streamed), llama(spare)] },
          held: { targets: [llama(held), llama(spare)] },
          "no-resume": { targets: [llama(noResume), llama(spare)], resume: { maxResumes: 0 } },
          spare: { targets: [llama(spare)] },
          classic: { targets: [llama(beforeClassic), llama(classic)] },
        },
        timeouts: { commitMs: 300, heartbeatMs: 100 },
      },
    },
  });
  openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await proxy?.stop();
  await Promise.all(servers.map((x) => x.stop()));
});

const long = Array.from({ length: 150 }, (_, i) => `k${i}`).join(" ");
/**
 * An answer still being written 700 ms after it was asked, when a non-stream test kills its server
 * (past the 300 ms commit grace): ~2,400 characters, ~2.4 s of generation here alone.
 */
const longer = Array.from({ length: 500 }, (_, i) => `k${i}`).join(" ");
/** The request, as the openai client sends it; `grammar` is llama.cpp's extension. */
const params = (/** @type {string} */ model, text = long) => ({ model, messages: [{ role: /** @type {const} */ ("user"), content: "go" }], temperature: 0, max_tokens: 2 * text.length + 64, grammar: grammar(text) });
const ask = (/** @type {string} */ model, /** @type {boolean} */ streamIt, text = long) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ ...params(model, text), stream: streamIt }),
});
/** @typedef {{ attempts: number, target: string, resumes?: Array<{ from: string, to: string, code: string, after_chars: number, after_tokens: number }> }} Extension */

/** @type {Map<string, Promise<import("openai/resources/completions").CompletionUsage>>} */
const uninterrupted = new Map();
/** The uninterrupted answer's usage, from the spare (asked once a text): what a continued answer's usage should match. */
function uninterruptedUsage(text = long) {
  let usage = uninterrupted.get(text);
  if (!usage) uninterrupted.set(text, (usage = askUninterrupted(text)));
  return usage;
}
async function askUninterrupted(/** @type {string} */ text) {
  const answer = await openai.chat.completions.create(/** @type {any} */ (params("spare", text)));
  assert.equal(answer.choices[0]?.message.content, text);
  return /** @type {import("openai/resources/completions").CompletionUsage} */ (answer.usage);
}

describe("the real llama-server killed mid-answer, another one continues", () => {
  it("stream (openai client): the exact full text, one id, finish stop, usage summed, resumes named", async () => {
    const expected = await uninterruptedUsage();
    /** @type {AsyncIterable<any>} */
    const stream = /** @type {any} */ (await openai.chat.completions.create(/** @type {any} */ ({ ...params("streamed"), stream: true, stream_options: { include_usage: true } })));
    let text = "";
    let killedAfter = -1;
    const ids = new Set();
    /** @type {string | null | undefined} */
    let finish;
    /** @type {any} */
    let usage;
    /** @type {Extension | undefined} */
    let ext;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta?.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
      if (chunk.x_switchyard) ext = chunk.x_switchyard;
      if (killedAfter < 0 && text.length >= 40) {
        killedAfter = text.length;
        s.streamed.kill("SIGKILL");
      }
    }
    assert.ok(killedAfter > 0 && killedAfter < long.length, `killed after ${killedAfter} of ${long.length} characters`);
    assert.equal(text, long);
    assert.equal(ids.size, 1);
    assert.equal(finish, "stop");
    assert.ok(ext?.resumes?.length === 1, JSON.stringify(ext));
    const [r] = /** @type {NonNullable<Extension["resumes"]>} */ (ext.resumes);
    assert.equal(r.from, `llama:${new URL(s.streamed.url).host}`);
    assert.equal(r.to, `llama:${new URL(s.spare.url).host}`);
    assert.equal(ext.target, r.to);
    assert.ok(r.after_chars >= killedAfter && r.after_chars < long.length, JSON.stringify(r));
    assert.equal(ext.attempts, 2);
    // Completion: the deltas written before (one token each) plus the continuation's. Prompt: the
    // continuation's less the prefill's tokens as the spare's /tokenize counts them (a random model
    // forced through a grammar writes the text in more tokens than it re-tokenizes into).
    console.log(`continued after ${r.after_chars} characters: usage ${JSON.stringify(usage)}; uninterrupted ${JSON.stringify(expected)}`);
    assert.ok(Math.abs(usage.completion_tokens - expected.completion_tokens) <= 3, `${JSON.stringify(usage)} vs ${JSON.stringify(expected)}`);
    assert.ok(Math.abs(usage.prompt_tokens - expected.prompt_tokens) <= 2, `${JSON.stringify(usage)} vs ${JSON.stringify(expected)}`);
  });

  it("non-stream (openai client): the exact full text and a normal finish; the client never knew", async () => {
    const expected = await uninterruptedUsage(longer);
    const pending = openai.chat.completions.create(/** @type {any} */ (params("held", longer)));
    await new Promise((r) => setTimeout(r, 700)); // past the commit grace, generation under way
    s.held.kill("SIGKILL");
    const answer = /** @type {import("openai/resources/chat/completions").ChatCompletion & { x_switchyard: Extension }} */ (await pending);
    assert.equal(answer.choices[0]?.message.content, longer);
    assert.equal(answer.choices[0]?.finish_reason, "stop");
    assert.match(answer.id, /^chatcmpl-/);
    const r = answer.x_switchyard.resumes?.[0];
    assert.ok(r && r.after_chars > 0 && r.after_chars < longer.length, JSON.stringify(answer.x_switchyard));
    assert.equal(r.to, `llama:${new URL(s.spare.url).host}`);
    assert.ok(Math.abs((answer.usage?.completion_tokens ?? 0) - expected.completion_tokens) <= 3, `${JSON.stringify(answer.usage)} vs ${JSON.stringify(expected)}`);
  });
});

describe("the real llama-server killed mid-answer, nothing can continue", () => {
  it("stream, no other target: text so far, one error frame, no [DONE], no finish_reason; the next request waits for the server's restart and is served by it", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, ask("alone", true));
    assert.equal(res.status, 200);
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    let raw = new TextDecoder().decode((await reader.read()).value);
    s.alone.kill("SIGKILL");
    const killedAt = Date.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += new TextDecoder().decode(value);
    }
    const endedAfter = Date.now() - killedAt;
    const frames = raw.split("\n\n").filter((b) => b.startsWith("data: ")).map((b) => b.slice(6));
    assert.ok(!frames.includes("[DONE]"));
    const parsed = frames.map((f) => JSON.parse(f));
    assert.equal(parsed.at(-1).error.code, "upstream_error");
    assert.ok(!parsed.some((f) => f.choices?.[0]?.finish_reason));
    assert.ok(endedAfter < 1000, `stream ended ${endedAfter} ms after the kill`);
    // Every server of the model is down, and it was ready a moment ago: the next request waits in
    // line (queue.maxWaitMs, 30 s by default) instead of a 502, and the restart serves it.
    const askedAt = Date.now();
    const again = fetch(`${proxy.url}/v1/chat/completions`, ask("alone", false, "back again"));
    await new Promise((r) => setTimeout(r, 1500));
    const restarted = await startLlamaServer({ port: s.alone.port, parallel: 1, args: ["-t", "1"] });
    servers.push(restarted);
    const res2 = await again;
    const waited = Date.now() - askedAt;
    const body = /** @type {any} */ (await res2.json());
    assert.equal(res2.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, "back again");
    // The wait outlasted timeouts.commitMs (300 ms): the 200 was committed before the target was
    // known, so the body's extension names it.
    assert.equal(body.x_switchyard?.target, `llama:${new URL(s.alone.url).host}`, JSON.stringify(body.x_switchyard));
    assert.ok(waited >= 1500, `answered ${waited} ms after it was asked, before the restart`);
  });

  it("stream, the other server runs --no-jinja: it starts a new turn instead of continuing, so none of it is sent and the error frame stands", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, ask("classic", true));
    assert.equal(res.status, 200);
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    let raw = "";
    for (let killed = false; ; ) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += new TextDecoder().decode(value);
      if (!killed && raw.includes('"content":"k')) {
        killed = true;
        s.beforeClassic.kill("SIGKILL");
      }
    }
    const frames = raw.split("\n\n").filter((b) => b.startsWith("data: ")).map((b) => JSON.parse(b.slice(6)));
    const text = frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
    assert.ok(text.length > 0 && long.startsWith(text), text);
    assert.equal(frames.at(-1).error.code, "upstream_error");
    assert.match(frames.at(-1).error.message, /began a different one/);
    assert.ok(!frames.some((f) => f.choices?.[0]?.finish_reason));
  });

  it("non-stream, resume off for the model: a committed 200 whose body is the error envelope; the next request goes to the spare", async () => {
    const pending = fetch(`${proxy.url}/v1/chat/completions`, ask("no-resume", false, longer));
    await new Promise((r) => setTimeout(r, 700));
    s.noResume.kill("SIGKILL");
    const killedAt = Date.now();
    const res = await pending;
    const raw = await res.text();
    const endedAfter = Date.now() - killedAt;
    assert.equal(res.status, 200);
    const body = JSON.parse(raw);
    assert.equal(body.error.code, "upstream_error");
    assert.ok(endedAfter < 1000, `answer ended ${endedAfter} ms after the kill`);
    const next = await fetch(`${proxy.url}/v1/chat/completions`, ask("no-resume", false, "spare answers"));
    assert.equal(next.status, 200);
    // Attempts from the body (always there); the header only when the answer began within the commit grace.
    const header = next.headers.get("x-switchyard-attempts");
    if (header) assert.equal(header, "2");
    const answer = /** @type {import("openai/resources/chat/completions").ChatCompletion & { x_switchyard: { attempts: number } }} */ (await next.json());
    assert.equal(answer.x_switchyard.attempts, 2);
    assert.equal(answer.choices[0]?.message.content, "spare answers");
  });
});
