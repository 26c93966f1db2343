// The admission queue under 1,000 waiting streams, end to end (`wrangler dev` as the launcher runs it, real
// workerd): one request holds the fixture upstream's single slot for 45 s while 1,000 streams
// wait in line, each holding its response open with `: keep-alive` comments. The workerd processes'
// resident memory (/proc/<pid>/status VmRSS) is read once all 1,000 are committed and waiting, then
// every 5 s for 35 s, just before the slot frees: a waiter that cost memory over time would show as
// growth that does not level off. Then every one of them is served. Figures: docs/reliability.md
// ("Admission queue"). With ADMISSION_MEMORY_SHARED=1 the line is the AdmissionHub's (queue.shared,
// the default where deployed; docs/architecture.md, "On by default where it is deployed").
//   node --test test/e2e/admission-memory.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";
import { workerdPids } from "../../bench/overhead/workerd-cpu.mjs";

const WAITERS = 1000;
const HOLD_MS = 45_000;
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
/** Resident memory of this test's workerd processes, in MiB. */
const rssOf = (/** @type {string} */ pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const rssMiB = () => [...workerdPids()].reduce((sum, pid) => sum + rssOf(pid), 0);
/** Each workerd process's RSS (wrangler dev runs two: its proxy and the Worker), for the record. */
const each = () => [...workerdPids()].map((pid) => rssOf(pid).toFixed(0)).join(" + ");

/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  fixtures = await startFixtureUpstream();
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: { line: { targets: [{ kind: "llama", url: `${fixtures.url}/u-mem${Date.now()}/behave/hold/${HOLD_MS}` }] } },
        queue: { maxWaitMs: 180_000, ...(process.env.ADMISSION_MEMORY_SHARED ? { shared: true } : {}) },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        timeouts: { heartbeatMs: 1000 },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await fixtures?.close();
});

/** @param {string} content */
const ask = (content, signal = AbortSignal.timeout(240_000)) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "line", stream: true, messages: [{ role: "user", content }] }),
    signal,
  });

describe("admission queue: 1,000 waiting streams", () => {
  it("hold workerd's memory flat while they wait, get only keep-alives while waiting, and are all served", { timeout: 360_000 }, async () => {
    // The hub learns of the upstream from a finished request, then samples its one slot every 200 ms;
    // the isolate's copy of the snapshot follows within 200 ms. Until then nothing is gated.
    for (let i = 0; i < 3; i++) {
      await (await ask("warm-up")).text();
      await sleep(700);
    }
    const blocker = await ask("hold");
    const holdFrom = Date.now();
    assert.equal(blocker.status, 200);
    const blockerText = blocker.text();
    await sleep(500);
    const rssBefore = rssMiB();
    const started = Date.now();
    const waiting = Array.from({ length: WAITERS }, (_, i) => ask(`waiter ${i}`));
    const responses = await Promise.all(waiting);
    const committedMs = Date.now() - started;
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([200]));
    // Reading every body from now on, as a client would.
    const bodies = responses.map((r) => r.text());
    await sleep(500);
    const rssStart = rssMiB();
    const eachStart = each();
    // Every 5 s for 35 s: the first seconds of heartbeats raise the allocator's high-water mark
    // (without heartbeats the growth is a fifth); a per-waiter cost would keep growing after it.
    const series = [rssStart];
    for (let k = 0; k < 7; k++) {
      await sleep(5_000);
      series.push(rssMiB());
    }
    const rssEnd = /** @type {number} */ (series.at(-1));
    const settled = /** @type {number} */ (series[2]);
    const eachEnd = each();
    const texts = await Promise.all(bodies);
    const servedMs = Date.now() - started;
    await blockerText;
    const served = texts.filter((t) => t.includes('"content":"serve') && t.includes("data: [DONE]")).length;
    const beforeData = texts.map((t) => t.slice(0, t.indexOf("data:")));
    const onlyKeepAlive = beforeData.every((head) => /^(: keep-alive\n\n)*$/.test(head));
    const keepAlives = beforeData.map((head) => head.split(": keep-alive").length - 1);
    const line = `${WAITERS} waiting streams: workerd RSS ${rssBefore.toFixed(1)} MiB before, ${rssStart.toFixed(1)} MiB once all were waiting (${committedMs} ms to commit them), ${settled.toFixed(1)} MiB 10 s later, ${rssEnd.toFixed(1)} MiB 35 s later (${(rssEnd - settled).toFixed(1)} MiB over the last 25 s); all served ${servedMs} ms after they were sent; keep-alives before the data: ${Math.min(...keepAlives)}–${Math.max(...keepAlives)}`;
    const got = /** @type {Array<{ body: string, at: number }>} */ (await (await fetch(`${fixtures.url}/_requests`)).json());
    const early = got.filter((r) => r.body.includes("waiter") && r.at < holdFrom + HOLD_MS - 500).length;
    console.log(line);
    console.log(`per process: ${eachStart} MiB → ${eachEnd} MiB; sum every 5 s: ${series.map((x) => x.toFixed(0)).join(", ")} MiB`);
    console.log(`waiters that reached the upstream while the slot was held: ${early}; with fewer than 5 keep-alives: ${keepAlives.filter((n) => n < 5).length}`);
    assert.equal(early, 0, "no waiter reached the one-slot upstream while it was busy");
    assert.equal(served, WAITERS, "every waiter is served once the slot frees");
    assert.ok(onlyKeepAlive, "nothing but keep-alive comments before the first data frame");
    assert.ok(Math.min(...keepAlives) >= 5, "each waited seconds, heartbeating");
    // Flat once the heartbeats' first seconds are past: the last 25 s of waiting add (almost) nothing.
    // A cost per waiter or per heartbeat grows steadily, in every 5 s step; the allocator growing its
    // heap is one step (seen in CI: +3, +7, +14, +2, +3). So the typical step (the median), times the
    // five steps, is what must stay small: 1 KB kept per heartbeat would be ~5 MiB a step, 25 in all.
    const steps = series.slice(2).map((x, i, xs) => (i === 0 ? 0 : x - xs[i - 1])).slice(1).sort((a, b) => a - b);
    const steady = (steps[2] ?? 0) * steps.length;
    assert.ok(steady < 24, `RSS grew steadily, ${steady.toFixed(1)} MiB over the last 25 s at the median step, while 1,000 streams waited (${series.map((x) => x.toFixed(0)).join(", ")})`);
    assert.ok(rssEnd - rssStart < 128, `RSS grew ${(rssEnd - rssStart).toFixed(1)} MiB in all while 1,000 streams waited`);
  });
});
