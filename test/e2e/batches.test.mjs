// The Batch API with the official `openai` client through `wrangler dev` (local R2, the BatchStore
// Durable Object) against real llama-servers: a file of a hundred mixed lines (chat with literal
// grammars, tool calls in prompt mode, a malformed line, a model the key may not use, a line for
// another endpoint) run to `completed` with every custom_id in the output or error file; an
// embeddings batch; a batch cancelled mid-way; one that expires in a short window; another key sees
// none of it; interactive requests sent meanwhile are not queued behind the batch's lines.
//   node --test test/e2e/batches.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import OpenAI, { toFile } from "openai";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard } from "../support/switchyard-dev.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let embedder;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {OpenAI} */
let client;
/** @type {OpenAI} */
let stranger;

/** A key made by the admin API, allowed `models`. */
async function createKey(/** @type {string} */ name, /** @type {string[]} */ models) {
  const res = await fetch(`${proxy.url}/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name, scopes: ["chat"], models }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return /** @type {{ key: string }} */ (await res.json()).key;
}

before(async () => {
  [llama, embedder] = await Promise.all([
    startLlamaServer({ parallel: 2, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1", "--embeddings", "--pooling", "mean"] }),
  ]);
  proxy = await startSwitchyard({
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `e2e-batch-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: {
          one: { targets: [{ kind: "llama", url: llama.url, tools: "prompt" }] },
          other: { targets: [{ kind: "llama", url: llama.url }] },
          embed: { targets: [{ kind: "llama", url: embedder.url }] },
        },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        batch: { concurrency: 2 },
      },
    },
  });
  client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: await createKey("batcher", ["one", "embed"]), maxRetries: 0 });
  stranger = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: await createKey("stranger", ["one", "embed"]), maxRetries: 0 });
});

after(async () => {
  await proxy?.stop();
  await Promise.all([llama?.stop(), embedder?.stop()]);
});

const TOOLS = [{ type: "function", function: { name: "get_weather", description: "Current weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

/** A chat line answered with exactly `text`. */
const chatLine = (/** @type {string} */ id, /** @type {string} */ text, model = "one") => ({
  custom_id: id,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, temperature: 0, max_tokens: 32, messages: [{ role: "user", content: `say ${text}` }], grammar: grammar(text) },
});

/** Uploads `lines` (objects, or raw strings written as they are) as a batch file. */
async function upload(/** @type {Array<object | string>} */ lines, as = client) {
  const jsonl = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n";
  return as.files.create({ file: await toFile(Buffer.from(jsonl), "batch.jsonl"), purpose: "batch" });
}

/** Polls a batch until `done(batch)`; fails after `ms`. */
async function until(/** @type {string} */ id, /** @type {(b: OpenAI.Batches.Batch) => boolean} */ done, ms = 120_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const b = await client.batches.retrieve(id);
    if (done(b)) return b;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${b.status} after ${ms} ms: ${JSON.stringify(b.request_counts)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The result lines of a file, by custom_id. */
async function results(/** @type {string | null | undefined} */ fileId) {
  /** @type {Map<string | null, any>} */
  const byId = new Map();
  /** @type {any[]} */
  const all = [];
  if (!fileId) return { byId, all };
  const text = await (await client.files.content(fileId)).text();
  for (const row of text.split("\n").filter(Boolean)) {
    const line = JSON.parse(row);
    all.push(line);
    byId.set(line.custom_id, line);
  }
  return { byId, all };
}

describe("Batch API on the pool, with the openai client", () => {
  /** @type {string} */
  let batchId = "";
  /** @type {string} */
  let inputId = "";

  it("a hundred mixed lines: every custom_id in the output or the error file, exact texts, tool calls rewritten", { timeout: 240_000 }, async () => {
    /** @type {Array<object | string>} */
    const lines = [];
    for (let i = 0; i < 85; i++) lines.push(chatLine(`chat-${i}`, `answer ${i}`));
    for (let i = 0; i < 12; i++) lines.push({ custom_id: `tool-${i}`, method: "POST", url: "/v1/chat/completions", body: { model: "one", temperature: 0, max_tokens: 200, tools: TOOLS, messages: [{ role: "user", content: "Weather in Paris?" }], grammar: grammar(CALL) } });
    lines.push("{this is not json");
    lines.push(chatLine("forbidden", "nope", "other"));
    lines.push({ custom_id: "wrong-url", method: "POST", url: "/v1/embeddings", body: { model: "embed", input: "x" } });
    lines.push(chatLine("unknown-model", "nope", "no-such-model"));
    assert.equal(lines.length, 101);
    const file = await upload(lines);
    assert.equal(file.object, "file");
    assert.equal(file.purpose, "batch");
    assert.ok(file.bytes > 0);
    inputId = file.id;
    assert.deepEqual((await client.files.retrieve(file.id)).id, file.id);

    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { job: "e2e" } });
    batchId = created.id;
    assert.equal(created.object, "batch");
    assert.equal(created.status, "validating");
    assert.deepEqual(created.metadata, { job: "e2e" });

    // Interactive requests meanwhile: each is served ahead of the batch's waiting lines.
    await until(batchId, (b) => b.status === "in_progress" && (b.request_counts?.completed ?? 0) >= 4);
    /** @type {number[]} */
    const waits = [];
    for (let i = 0; i < 8; i++) {
      const t0 = Date.now();
      const r = await client.chat.completions.create(/** @type {any} */ ({ model: "one", temperature: 0, max_tokens: 16, messages: [{ role: "user", content: "hi" }], grammar: grammar(`live ${i}`) }));
      waits.push(Date.now() - t0);
      assert.equal(r.choices[0]?.message.content, `live ${i}`);
      assert.equal(r.service_tier, "default");
    }
    // The status page and /metrics show the batch while it runs.
    const status = /** @type {any} */ (await (await fetch(`${proxy.url}/v1/admin/status`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json());
    const shown = status.batches.find((/** @type {any} */ b) => b.id === batchId);
    assert.ok(shown, JSON.stringify(status.batches));
    assert.equal(shown.key, "batcher");
    assert.equal(shown.request_counts.total, 101);
    const metrics = await (await fetch(`${proxy.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.match(metrics, /^switchyard_batches_active [1-9]/m);
    assert.match(metrics, /^switchyard_batch_lines\{state="pending"\} \d+/m);
    const during = await client.batches.retrieve(batchId);
    assert.ok(during.status === "in_progress" || during.status === "finalizing" || during.status === "completed");

    const done = await until(batchId, (b) => b.status === "completed" || b.status === "failed");
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.request_counts?.total, 101);
    assert.ok(done.output_file_id && done.error_file_id);
    for (const k of ["in_progress_at", "finalizing_at", "completed_at", "expires_at"]) assert.equal(typeof (/** @type {any} */ (done))[k], "number", k);

    const out = await results(done.output_file_id);
    const err = await results(done.error_file_id);
    for (let i = 0; i < 85; i++) {
      const line = out.byId.get(`chat-${i}`);
      assert.ok(line, `chat-${i} in the output file; in the error file: ${JSON.stringify(err.byId.get(`chat-${i}`) ?? null)}`);
      assert.match(line.id, /^batch_req_/);
      assert.equal(line.error, null);
      assert.equal(line.response.status_code, 200);
      assert.match(line.response.request_id, /^req_/);
      assert.equal(line.response.body.object, "chat.completion");
      assert.equal(line.response.body.choices[0].message.content, `answer ${i}`);
    }
    for (let i = 0; i < 12; i++) {
      const body = out.byId.get(`tool-${i}`)?.response.body;
      assert.equal(body?.choices[0].finish_reason, "tool_calls", `tool-${i}`);
      assert.equal(body.choices[0].message.tool_calls[0].function.name, "get_weather");
      assert.deepEqual(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments), { city: "Paris" });
    }
    const malformed = err.all.find((l) => l.custom_id === null);
    assert.equal(malformed.error.code, "invalid_json_line");
    assert.equal(malformed.error.line, 98);
    assert.equal(err.byId.get("forbidden").error.code, "model_not_allowed");
    assert.equal(err.byId.get("forbidden").error.line, 99);
    assert.equal(err.byId.get("wrong-url").error.code, "mismatched_url");
    // A model outside the key's allow-list is refused in validation too, whether or not the deployment serves it.
    assert.equal(err.byId.get("unknown-model").error.code, "model_not_allowed");
    assert.equal(out.all.length + err.all.length, 101);
    assert.equal(done.request_counts?.completed, 97);
    assert.equal(done.request_counts?.failed, 4);
    assert.ok((done.usage?.output_tokens ?? 0) > 0);

    // Interactive requests waited at most for a running line to end, never for the batch's queue.
    waits.sort((a, b) => a - b);
    console.log(`interactive request times while the batch ran: ${waits.join(", ")} ms`);
    assert.ok((waits.at(-1) ?? 0) < 5000, `interactive waits ${waits.join(", ")} ms`);
  });

  it("an embeddings batch", { timeout: 120_000 }, async () => {
    const lines = Array.from({ length: 6 }, (_, i) => ({ custom_id: `e${i}`, method: "POST", url: "/v1/embeddings", body: { model: "embed", input: `text ${i}` } }));
    const file = await upload(lines);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" });
    const done = await until(b.id, (x) => x.status === "completed" || x.status === "failed");
    assert.equal(done.status, "completed");
    assert.equal(done.error_file_id ?? null, null);
    const out = await results(done.output_file_id);
    assert.equal(out.all.length, 6);
    for (const l of out.all) assert.ok(l.response.body.data[0].embedding.length > 0);
  });

  it("a file with no valid line fails in validation with errors", { timeout: 60_000 }, async () => {
    const file = await upload(["nope", JSON.stringify({ method: "POST", url: "/v1/chat/completions", body: { model: "one" } })]);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    const done = await until(b.id, (x) => x.status !== "validating");
    assert.equal(done.status, "failed");
    assert.equal(typeof done.failed_at, "number");
    assert.deepEqual(
      done.errors?.data?.map((e) => [e.code, e.line]),
      [
        ["invalid_json_line", 1],
        ["missing_custom_id", 2],
      ],
    );
  });

  it("cancel stops new lines at once; the batch ends cancelled with what it finished", { timeout: 180_000 }, async () => {
    const lines = Array.from({ length: 80 }, (_, i) => chatLine(`c${i}`, `cancel ${i}`));
    const file = await upload(lines);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await until(b.id, (x) => (x.request_counts?.completed ?? 0) >= 3);
    const cancelling = await client.batches.cancel(b.id);
    assert.ok(cancelling.status === "cancelling" || cancelling.status === "cancelled", cancelling.status);
    const done = await until(b.id, (x) => x.status === "cancelled");
    assert.equal(typeof done.cancelled_at, "number");
    const completed = done.request_counts?.completed ?? 0;
    assert.ok(completed >= 3 && completed < 80, `completed ${completed}`);
    const out = await results(done.output_file_id);
    const err = await results(done.error_file_id);
    const missing = lines.map((l) => /** @type {{ custom_id: string }} */ (l).custom_id).filter((id) => !out.byId.has(id) && !err.byId.has(id));
    assert.deepEqual(missing, [], `in neither file; counts ${JSON.stringify(done.request_counts)}`);
    assert.equal(out.all.length, completed);
    assert.equal(out.all.length + err.all.length, 80);
    for (const l of err.all) assert.equal(l.error.code, "batch_cancelled");
    for (const l of out.all) assert.equal(l.response.body.choices[0].message.content, `cancel ${l.custom_id.slice(1)}`);
  });

  it("a batch past its window ends expired with what it finished", { timeout: 180_000 }, async () => {
    const lines = Array.from({ length: 400 }, (_, i) => chatLine(`x${i}`, `expire ${i}`));
    const file = await upload(lines);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: /** @type {any} */ ("4s") });
    const done = await until(b.id, (x) => x.status === "expired" || x.status === "completed");
    assert.equal(done.status, "expired");
    assert.equal(typeof done.expired_at, "number");
    const out = await results(done.output_file_id);
    const err = await results(done.error_file_id);
    assert.ok(out.all.length > 0 && out.all.length < 400, `finished ${out.all.length}`);
    assert.equal(out.all.length + err.all.length, 400);
    for (const l of err.all) assert.equal(l.error.code, "batch_expired");
  });

  it("another key sees none of it (404), and lists nothing", async () => {
    await assert.rejects(stranger.batches.retrieve(batchId), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(stranger.batches.cancel(batchId), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(stranger.files.retrieve(inputId), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(stranger.files.content(inputId), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(stranger.files.delete(inputId), (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(stranger.batches.create({ input_file_id: inputId, endpoint: "/v1/chat/completions", completion_window: "24h" }), (e) => e instanceof OpenAI.NotFoundError);
    assert.equal((await stranger.batches.list()).data.length, 0);
    assert.equal((await stranger.files.list()).data.length, 0);
    // The owner's list is paged, newest first.
    const page = await client.batches.list({ limit: 2 });
    assert.equal(page.data.length, 2);
    assert.equal(page.has_more, true);
    const next = await client.batches.list({ limit: 2, after: page.data[1]?.id });
    assert.ok(next.data.length >= 1);
    assert.ok(!next.data.some((b) => page.data.some((p) => p.id === b.id)));
    // And the owner may delete its file.
    const deleted = await client.files.delete(inputId);
    assert.deepEqual(deleted, { id: inputId, object: "file", deleted: true });
    await assert.rejects(client.files.retrieve(inputId), (e) => e instanceof OpenAI.NotFoundError);
  });
});

describe("usage and the request log count batch lines", () => {
  it("the key's usage rows for batch lines are marked batch, the request log names each line", async () => {
    const usage = /** @type {any} */ (await (await fetch(`${proxy.url}/v1/usage`, { headers: { authorization: `Bearer ${client.apiKey}` } })).json());
    const batchRows = usage.usage.filter((/** @type {any} */ r) => r.batch);
    assert.ok(batchRows.length > 0, JSON.stringify(usage.usage));
    // Lines that ran are charged to their server; a line ended by cancel or expiry before any server answered has no backend.
    for (const r of batchRows) {
      assert.match(r.backend, /^batch:/);
      assert.equal(r.kind, r.backend === "batch:" ? "none" : "llama");
    }
    assert.ok(batchRows.some((/** @type {any} */ r) => r.kind === "llama"));
    assert.ok(batchRows.reduce((/** @type {number} */ n, /** @type {any} */ r) => n + r.requests, 0) >= 97);
    assert.ok(usage.usage.some((/** @type {any} */ r) => !r.batch && r.requests >= 8), "the interactive requests' own row");
    const log = /** @type {any} */ (await (await fetch(`${proxy.url}/v1/admin/requests?limit=200`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json());
    const lines = (log.data ?? []).filter((/** @type {any} */ r) => /^batch_[A-Za-z0-9]+:\d+$/.test(r.client_request_id ?? ""));
    assert.ok(lines.length > 0, JSON.stringify(log).slice(0, 500));
  });
});

describe("service_tier", () => {
  /** @param {OpenAI} as @param {string | undefined} tier */
  const ask = async (as, tier) => {
    const r = await as.chat.completions.create(/** @type {any} */ ({ model: "one", max_tokens: 8, messages: [{ role: "user", content: "hi" }], grammar: grammar("ok"), ...(tier ? { service_tier: tier } : {}) }));
    return r.service_tier;
  };

  it("is served at most at the key's maxServiceTier, and the answer says which tier served it", async () => {
    assert.equal(await ask(client, undefined), "default");
    assert.equal(await ask(client, "auto"), "default");
    assert.equal(await ask(client, "flex"), "flex");
    // Above the key's cap (default: up to `default`): served at the cap, as OpenAI does.
    assert.equal(await ask(client, "priority"), "default");
    await assert.rejects(ask(client, "gold"), (e) => e instanceof OpenAI.BadRequestError && /service_tier/.test(e.message));
    const keys = /** @type {any} */ (await (await fetch(`${proxy.url}/v1/admin/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json());
    const id = keys.data.find((/** @type {any} */ k) => k.name === "batcher").id;
    const patched = await fetch(`${proxy.url}/v1/admin/keys/${id}`, { method: "PATCH", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ maxServiceTier: "priority" }) });
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.equal(/** @type {any} */ (await patched.json()).maxServiceTier, "priority");
    // The key cache holds a record up to 5 s.
    const deadline = Date.now() + 8000;
    while ((await ask(client, "priority")) !== "priority") {
      assert.ok(Date.now() < deadline, "the new cap applied within the key cache's 5 s");
      await new Promise((r) => setTimeout(r, 500));
    }
    const resp = await client.responses.create(/** @type {any} */ ({ model: "one", input: "hi", max_output_tokens: 8, service_tier: "priority", grammar: grammar("ok") }));
    assert.equal(resp.service_tier, "priority");
    const msg = /** @type {any} */ (await (await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "x-api-key": String(client.apiKey), "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify({ model: "one", max_tokens: 8, messages: [{ role: "user", content: "hi" }], service_tier: "auto", grammar: grammar("ok") }) })).json());
    assert.equal(msg.usage.service_tier, "standard");
  });
});
