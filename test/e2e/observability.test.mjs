// End to end: the request log and OpenTelemetry traces under `wrangler dev` as the launcher runs it (real
// workerd), in front of a real llama-server, with a real OTLP/HTTP receiver this test starts (a
// node:http server that records what is POSTed to /v1/traces, as a collector's receiver takes it).
// Then the same Worker restarted on the same local state, its collector now hanging: the log kept
// its requests, and the client's answers are not slower for the collector.
import { createServer } from "node:http";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, readSse, startSwitchyard } from "../support/switchyard-dev.mjs";

const ADMIN_TOKEN = `adm-${crypto.randomUUID()}`;
const LOG = `e2e-${crypto.randomUUID()}`;
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const CHROMIUM = "/usr/bin/chromium";
/** One state folder for every start in this file: the second is a restart on the first's state. */
const STATE = mkdtempSync(join(tmpdir(), "switchyard-obs-"));
const onState = ["--persist-to", STATE];
const SHOTS = process.env.SWITCHYARD_SCREENSHOTS ?? "/tmp";

/**
 * An OTLP/HTTP receiver: records each POST (path, headers, JSON body); `hang` stops answering.
 * @param {{ hang?: boolean }} [opts]
 */
async function startReceiver({ hang = false } = {}) {
  /** @type {Array<{ path: string, headers: import("node:http").IncomingHttpHeaders, body: any }>} */
  const posts = [];
  /** @type {import("node:http").ServerResponse[]} */
  const held = [];
  const server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8").on("data", (s) => (text += s));
    req.on("end", () => {
      posts.push({ path: req.url ?? "", headers: req.headers, body: text ? JSON.parse(text) : null });
      if (hang) held.push(res);
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
  const port = /** @type {import("node:net").AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    /** Every span received, flattened. */
    spans: () => posts.flatMap((p) => p.body?.resourceSpans ?? []).flatMap((rs) => rs.scopeSpans).flatMap((ss) => ss.spans),
    close: () => {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r(undefined)));
    },
  };
}

/** @param {any} span @param {string} key */
function attr(span, key) {
  const v = span.attributes.find((/** @type {any} */ a) => a.key === key)?.value;
  if (!v) return undefined;
  if ("intValue" in v) return Number(v.intValue);
  if ("arrayValue" in v) return v.arrayValue.values.map((/** @type {any} */ x) => x.stringValue);
  return Object.values(v)[0];
}

/** @param {() => any} probe @param {number} [ms] */
async function eventually(probe, ms = 8000) {
  const until = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {Awaited<ReturnType<typeof startReceiver>>} */
let receiver;
/** @type {Awaited<ReturnType<typeof startReceiver>>} */
let hanging;

/** @param {string} collector */
const vars = (collector) => ({
  ADMIN_TOKEN,
  REQUEST_LOG_NAME: LOG,
  SWITCHYARD_CONFIG: {
    models: {
      tiny: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }, { kind: "llama", url: llama.url }] },
      gone: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }] },
    },
    retries: { perTarget: 1 },
    observability: { otlp: { endpoint: collector, headers: { "x-collector-team": "switchyard-e2e" }, timeoutMs: 3000 } },
  },
});

const body = (/** @type {Record<string, unknown>} */ extra = {}) => ({ model: "tiny", messages: [{ role: "user", content: "Say it." }], max_tokens: 16, grammar: grammar("Hello there"), ...extra });

/** @param {string} url @param {Record<string, unknown>} json @param {Record<string, string>} [headers] */
const post = (url, json, headers = {}) => fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(json) });

/** @param {string} url @param {string} path */
const adminGet = (url, path) => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

/** Median milliseconds of `n` non-stream requests, one at a time. @param {string} url @param {number} n */
async function medianMs(url, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await post(url, body());
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)];
}

before(async () => {
  [llama, receiver, hanging] = await Promise.all([startLlamaServer({ parallel: 2, args: ["-t", "1"] }), startReceiver(), startReceiver({ hang: true })]);
});

after(async () => {
  await Promise.all([llama?.stop(), receiver?.close(), hanging?.close()]);
  rmSync(STATE, { recursive: true, force: true });
});

describe("traces and the request log under wrangler dev", () => {
  /** @type {string[]} */
  const logged = [];
  let healthyMedian = 0;

  it("a stream with a traceparent: a SERVER span in the client's trace, a CLIENT span per attempt", async () => {
    const proxy = await startSwitchyard({ vars: vars(receiver.url), args: onState });
    try {
      const res = await post(proxy.url, body({ stream: true, stream_options: { include_usage: true } }), { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
      const { frames } = await readSse(res);
      const usage = frames.find((f) => f.usage)?.usage;
      const finish = frames.find((f) => f.choices?.[0]?.finish_reason)?.choices[0].finish_reason;
      const attempts = Number(res.headers.get("x-switchyard-attempts"));
      assert.equal(res.status, 200);
      assert.equal(attempts, 2); // the dead server, then the llama-server
      logged.push(/** @type {string} */ (res.headers.get("x-request-id")));

      const server = await eventually(() => receiver.spans().find((s) => s.traceId === CLIENT_TRACE && s.kind === 2));
      assert.equal(server.name, "chat tiny");
      assert.equal(server.parentSpanId, CLIENT_SPAN);
      assert.equal(attr(server, "gen_ai.operation.name"), "chat");
      assert.equal(attr(server, "gen_ai.request.model"), "tiny");
      assert.equal(attr(server, "gen_ai.usage.input_tokens"), usage.prompt_tokens);
      assert.equal(attr(server, "gen_ai.usage.output_tokens"), usage.completion_tokens);
      assert.deepEqual(attr(server, "gen_ai.response.finish_reasons"), [finish]);
      assert.equal(attr(server, "http.response.status_code"), 200);
      assert.equal(server.status.code, 0);
      const children = receiver.spans().filter((s) => s.traceId === CLIENT_TRACE && s.parentSpanId === server.spanId);
      assert.equal(children.length, attempts);
      assert.ok(children.every((c) => c.kind === 3 && attr(c, "server.address")));
      // Routing reported each attempt itself: none estimated from the answer.
      assert.ok(children.every((c) => attr(c, "switchyard.attempt.estimated") === undefined), JSON.stringify(children.map((c) => c.attributes)));
      const answered = children.find((c) => attr(c, "error.type") === undefined);
      assert.equal(`${attr(answered, "server.address")}:${attr(answered, "server.port")}`, new URL(llama.url).host);
      assert.ok(BigInt(server.startTimeUnixNano) <= BigInt(answered.startTimeUnixNano));
      const sent = receiver.posts.find((p) => JSON.stringify(p.body).includes(CLIENT_TRACE));
      assert.equal(sent?.path, "/v1/traces");
      assert.equal(sent?.headers["x-collector-team"], "switchyard-e2e");
      assert.match(String(sent?.headers["content-type"]), /application\/json/);

      // Every target failed: a 502, and its span has status ERROR.
      const failed = await post(proxy.url, { ...body(), model: "gone" });
      assert.equal(failed.status, 502);
      const failedId = failed.headers.get("x-request-id");
      logged.push(/** @type {string} */ (failedId));
      const errorSpan = await eventually(() => receiver.spans().find((s) => s.kind === 2 && attr(s, "switchyard.request_id") === failedId));
      assert.equal(errorSpan.status.code, 2);
      assert.equal(attr(errorSpan, "http.response.status_code"), 502);
      assert.equal(attr(errorSpan, "error.type"), /** @type {any} */ (await failed.json()).error.code);

      healthyMedian = await medianMs(proxy.url, 9);
      // The log has what the clients got.
      const list = /** @type {any} */ (await (await adminGet(proxy.url, "/v1/admin/requests?limit=100")).json());
      assert.deepEqual(
        list.data.filter((/** @type {any} */ r) => logged.includes(r.id)).map((/** @type {any} */ r) => [r.id, r.status]),
        [
          [logged[1], 502],
          [logged[0], 200],
        ],
      );
    } finally {
      await proxy.stop();
    }
  });

  it("restarted on the same state with its collector hanging: the log kept its requests, the answers are not slower", async () => {
    const proxy = await startSwitchyard({ vars: vars(hanging.url), args: onState });
    try {
      const row = /** @type {any} */ (await (await adminGet(proxy.url, `/v1/admin/requests/${logged[0]}`)).json());
      assert.equal(row.id, logged[0]);
      assert.equal(row.attempts, 2);
      assert.equal((await adminGet(proxy.url, `/v1/admin/requests?status=error`)).status, 200);
      const median = await medianMs(proxy.url, 9);
      console.log(`# median answer ${median.toFixed(1)} ms with the collector hanging, ${healthyMedian.toFixed(1)} ms with it answering`);
      // A collector that never answers costs the client nothing: exports leave after the answer, under a timeout.
      assert.ok(median < healthyMedian * 1.5 + 30, `median ${median.toFixed(1)} ms with the collector hanging, ${healthyMedian.toFixed(1)} ms with it answering`);
      await eventually(() => hanging.posts.length > 0);
      const stats = await eventually(async () => {
        const s = /** @type {any} */ (await (await adminGet(proxy.url, "/v1/admin/observability")).json());
        return s.otlp.failed_exports > 0 ? s : null;
      }, 10_000);
      assert.match(stats.otlp.last_error, /abort|timed? ?out/i);
    } finally {
      await proxy.stop();
    }
  });

  it("the status page lists the recent requests, failed ones marked, filtered, each opening to its detail", { skip: !existsSync(CHROMIUM) && "chromium is not installed (apt-get install chromium)" }, async () => {
    const proxy = await startSwitchyard({ vars: { ...vars(receiver.url), REQUEST_LOG_NAME: `page-${crypto.randomUUID()}` }, args: onState });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless=new", "--no-sandbox", "--disable-background-networking", "--no-first-run"] });
    try {
      const ok = await post(proxy.url, body());
      await ok.arrayBuffer();
      const gone = await post(proxy.url, { ...body(), model: "gone" });
      const goneId = gone.headers.get("x-request-id");
      await gone.arrayBuffer();
      const bad = await post(proxy.url, { model: "tiny" });
      await bad.arrayBuffer();
      const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
      await page.goto(`${proxy.url}/status.html#admin=${ADMIN_TOKEN}`);
      const rowCount = async () => (await page.$$("#requests tbody tr[data-id]")).length;
      await eventually(async () => (await rowCount()) === 3, 10_000);
      const rows = await page.$$eval("#requests tbody tr", (trs) => trs.map((tr) => ({ failed: tr.classList.contains("failed"), cells: [...tr.children].map((td) => td.textContent) })));
      // Newest first: the 400, the 502, the answer.
      assert.deepEqual(rows.map((r) => [r.failed, r.cells[4], r.cells[5]]), [[true, "400", "missing_required_parameter"], [true, "502", "upstream_unreachable"], [false, "200", ""]]);
      assert.equal(await page.textContent("#request-errors"), "2 failed");
      await page.click(`#requests tr[data-id="${goneId}"]`);
      await page.waitForSelector("#request-detail:has-text('upstream_unreachable')");
      assert.match(/** @type {string} */ (await page.textContent("#request-detail")), /llama:127\.0\.0\.1:9: upstream_unreachable/);
      await page.screenshot({ path: `${SHOTS}/switchyard-status-requests.png`, fullPage: true });
      // The Targets table: the configured targets first, with or without traffic (targets of earlier
      // runs' configurations follow them, marked, for a day).
      const targets = await page.$$eval("#targets tbody tr", (trs) => trs.map((tr) => [tr.children[0]?.textContent ?? "", tr.children[0]?.className ?? ""]));
      const configured = ["llama:127.0.0.1:9", `llama:${new URL(llama.url).host}`];
      assert.deepEqual(targets.slice(0, 2).map(([name]) => name), configured, JSON.stringify(targets));
      assert.ok(targets.slice(0, 2).every(([, cls]) => cls !== "gone"), JSON.stringify(targets));
      assert.ok(targets.slice(2).every(([name, cls]) => cls === "gone" && name.includes("(not configured")), JSON.stringify(targets));
      await page.fill("#filter-model", "gone");
      await eventually(async () => (await rowCount()) === 1);
      await page.check("#filter-errors");
      await page.fill("#filter-model", "tiny");
      await eventually(async () => (await page.$$eval("#requests tbody tr[data-id] td:nth-child(5)", (tds) => tds.map((td) => td.textContent))).join() === "400");
    } finally {
      await browser.close();
      await proxy.stop();
    }
  });
});
