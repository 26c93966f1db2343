#!/usr/bin/env node
// CPU of the request outbox's span work for one batch, two revisions side by side in one Node process:
// 256 finished requests (one attempt each) made into their spans (requestSpans) and written into an
// export body (spanJson into a SpanBatch, its buffer started at the size the last batch took), as
// the outbox does once a second. Rounds alternate A and B; the median per batch of each, and B/A,
// are printed.
//   npx node bench/overhead/span-encoding.mjs [--a HEAD] [--b <rev>] [--rounds 60] [--batches 10]
// (B: the working tree unless --b names a revision)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { bundleEntry, checkoutRevision } from "./runtimes.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { values: flags } = parseArgs({ options: { a: { type: "string", default: "HEAD" }, b: { type: "string" }, rounds: { type: "string", default: "60" }, batches: { type: "string", default: "10" } } });
const ROUNDS = Number(flags.rounds);
const BATCHES = Number(flags.batches);
const REQUESTS = 256;

/** @type {Array<() => void>} */
const cleanups = [];

/**
 * The batch's work as `root`'s code does it: an entry importing that tree's modules, bundled.
 * @param {string} root
 * @returns {Promise<() => number>} one batch; returns the body's size
 */
async function batchOf(root) {
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "spans-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const src = (/** @type {string} */ f) => JSON.stringify(join(root, "src/observability", f));
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    `import { requestSpans, spanJson } from ${src("otlp-spans.ts")};
import { SpanBatch } from ${src("span-batch.ts")};
import { RequestTrace } from ${src("request-trace.ts")};
// A 16-token answer served on the first attempt: the bench's smallest request, as the outbox has it.
const record = { id: "req_0123456789abcdefghijklmn", time: "", key: "k_alice", endpoint: "/v1/chat/completions", model: "fast", stream: false, status: 200, error: null, target: "llama:127.0.0.1:40000", attempts: 1, prompt_tokens: 9, completion_tokens: 16, ttft_ms: 2, duration_ms: 3, key_name: "alice", finish_reasons: ["stop"], outcomes: [], resumes: [], timings: { first_event_ms: 1, total_ms: 2 }, tool_calls: null };
// The exporter starts each batch's buffer at the size its last one took (a revision before that
// ignores the second argument and has no nextBatchBytes).
let hint: number | undefined;
export function batch(): number {
  const out = new SpanBatch(2 * 1024 * 1024, hint);
  const now = Date.now();
  for (let i = 0; i < ${REQUESTS}; i++) {
    const trace = new RequestTrace(null);
    trace.attemptStarted("llama:127.0.0.1:40000", "http://127.0.0.1:40000/fast").ended("ok");
    for (const span of requestSpans(record, trace, now, trace.attempts)) out.add(spanJson(span));
  }
  hint = out.nextBatchBytes?.();
  return out.body().length;
}
`,
  );
  const bundle = await bundleEntry(entry);
  cleanups.push(bundle.cleanup);
  return (await import(pathToFileURL(bundle.script).href)).batch;
}

try {
  const rootOf = (/** @type {string | undefined} */ rev) => {
    if (!rev) return ROOT;
    const c = checkoutRevision(rev);
    cleanups.push(c.cleanup);
    return c.dir;
  };
  const runs = { A: await batchOf(rootOf(flags.a)), B: await batchOf(rootOf(flags.b)) };
  /** @type {Record<"A" | "B", number[]>} */
  const times = { A: [], B: [] };
  const bytes = { A: 0, B: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of /** @type {Array<"A" | "B">} */ (r % 2 ? ["B", "A"] : ["A", "B"])) {
      const t0 = performance.now();
      for (let i = 0; i < BATCHES; i++) bytes[k] = runs[k]();
      // The first rounds are the JIT's warm-up: kept out of the median.
      if (r >= ROUNDS / 6) times[k].push((performance.now() - t0) / BATCHES);
    }
  }
  const median = (/** @type {number[]} */ xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  const [a, b] = [median(times.A), median(times.B)];
  console.log(`a batch of ${REQUESTS} requests' spans (${2 * REQUESTS} spans), median of ${times.A.length} rounds × ${BATCHES} batches, Node ${process.versions.node}:`);
  console.log(`  A (${flags.a}): ${a.toFixed(3)} ms, ${bytes.A} B   B (${flags.b ?? "working tree"}): ${b.toFixed(3)} ms, ${bytes.B} B   B/A ${(b / a).toFixed(3)}`);
} finally {
  for (const c of cleanups.reverse()) c();
}
