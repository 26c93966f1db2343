// Fault: the real llama-server killed mid-answer, stream and non-stream, through `wrangler dev`.
// Stream: the text so far, then one error frame, no [DONE], no finish_reason. Non-stream (committed
// after the grace period): a 200 whose body is the error envelope. Then the dead server is refused
// (502 upstream_unreachable) within a second, and a second server in the plan takes over.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

/** @typedef {import("../support/llama-server.mjs").LlamaServer} LlamaServer */
/** @type {LlamaServer} */
let stream;
/** @type {LlamaServer} */
let nonStream;
/** @type {LlamaServer} */
let spare;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  [stream, nonStream, spare] = await Promise.all([1, 2, 3].map(() => startLlamaServer({ parallel: 1, args: ["-t", "1"] })));
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          "victim-s": { targets: [{ kind: "llama", url: stream.url }] },
          "victim-n": { targets: [{ kind: "llama", url: nonStream.url }, { kind: "llama", url: spare.url }] },
        },
        timeouts: { commitMs: 300, heartbeatMs: 100 },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([stream, nonStream, spare].map((s) => s?.stop()));
});

const long = Array.from({ length: 150 }, (_, i) => `k${i}`).join(" ");
const ask = (/** @type {string} */ model, /** @type {boolean} */ streamIt, text = long) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model, stream: streamIt, messages: [{ role: "user", content: "go" }], temperature: 0, max_tokens: 1000, grammar: grammar(text) }),
});

describe("the real llama-server killed mid-answer", () => {
  it("stream: text so far, one error frame, no [DONE], no finish_reason; then 502 at once", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, ask("victim-s", true));
    assert.equal(res.status, 200);
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    let raw = new TextDecoder().decode((await reader.read()).value);
    stream.kill("SIGKILL");
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
    const again = await fetch(`${proxy.url}/v1/chat/completions`, ask("victim-s", true, "x"));
    assert.equal(again.status, 502);
    assert.equal(/** @type {import("../support/switchyard-dev.mjs").ErrorBody} */ (await again.json()).error.code, "upstream_unreachable");
  });

  it("non-stream: a committed 200 whose body is the error envelope; the next request goes to the spare", async () => {
    const pending = fetch(`${proxy.url}/v1/chat/completions`, ask("victim-n", false));
    await new Promise((r) => setTimeout(r, 700)); // past the commit grace, generation under way
    nonStream.kill("SIGKILL");
    const killedAt = Date.now();
    const res = await pending;
    const raw = await res.text();
    const endedAfter = Date.now() - killedAt;
    assert.equal(res.status, 200);
    const body = JSON.parse(raw);
    assert.equal(body.error.code, "upstream_error");
    assert.ok(endedAfter < 1000, `answer ended ${endedAfter} ms after the kill`);
    const next = await fetch(`${proxy.url}/v1/chat/completions`, ask("victim-n", false, "spare answers"));
    assert.equal(next.status, 200);
    // Attempts from the body (always there); the header only when the answer began within the commit grace.
    const header = next.headers.get("x-switchyard-attempts");
    if (header) assert.equal(header, "2");
    const answer = /** @type {import("openai/resources/chat/completions").ChatCompletion & { x_switchyard: { attempts: number } }} */ (await next.json());
    assert.equal(answer.x_switchyard.attempts, 2);
    assert.equal(answer.choices[0].message.content, "spare answers");
  });
});
