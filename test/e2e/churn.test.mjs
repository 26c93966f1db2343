// Issue 28 at a small size: answers survive a pool in churn. Three real llama-servers (the tiny model,
// `-np 2 -t 1 --poll 0`) behind Switchyard (`wrangler dev`, `balance: "least-busy"`, defaults
// otherwise); for about 25 s one live server is SIGKILLed every 2–5 s and restarted on its port 2–4 s
// later, never leaving none up; three clients stream (70 %) or not (30 %) answers of about 60 tokens
// whose text a one-literal grammar fixes, all to the same prompt as the issue measured (placement
// keeps them together, so they wait for one server's slots). Every answer must be the exact text
// (stream: one id, one finish_reason, `[DONE]`, no error frame), continued or not: no wrong answer
// and, at this size, no error at all (≥ 99 % exact over a few dozen answers), and every restarted
// server must serve an answer through Switchyard within 2 s of answering /health again.
//   PATH=$PWD/node_modules/.bin:$PATH node --test test/e2e/churn.test.mjs   (CHURN_SEED=n for other kills)
// The larger run, with the calm baseline: bench/churn.mjs.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatDetails, formatSummary } from "../support/churn-verdict.mjs";
import { runChurn, startChurnSwitchyard, startPool } from "../support/churn.mjs";

const SEED = Number(process.env.CHURN_SEED ?? 28);
/** @type {import("../support/churn.mjs").Pool} */
let pool;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  pool = await startPool({ servers: 3 });
  proxy = await startChurnSwitchyard(pool);
  // Wrangler's first request compiles the Worker: not part of the measure.
  const warm = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "churn", messages: [{ role: "user", content: "warm" }], max_tokens: 4, grammar: 'root ::= "ok"' }),
  });
  assert.equal(warm.status, 200, await warm.text());
  await warm.text().catch(() => {});
});

after(async () => {
  await proxy?.stop();
  await pool?.stop();
});

it("servers die and come back: every answer exact, restarted servers serve again within 2 s", { timeout: 90_000 }, async () => {
  const run = await runChurn({ url: proxy.url, pool, clients: 3, durationMs: 25_000, seed: SEED, timeoutMs: 30_000, tailMs: 8_000 });
  const s = run.summary;
  let report = [...formatSummary(s, `churn (seed ${SEED})`), ...formatDetails([...run.verdicts, ...run.probes], run.restarts, run.timeline)].join("\n");
  console.log(report);
  // The harness itself: enough deaths, and never none up.
  assert.ok(s.deaths >= 5, `only ${s.deaths} deaths in ${run.elapsedMs} ms`);
  assert.ok((run.chaos?.minUp ?? 0) >= 1, "a moment with no server up");
  assert.ok(s.answers >= 20, `only ${s.answers} answers`);

  /** @type {string[]} */
  const problems = [];
  for (const v of [...run.verdicts, ...run.probes].filter((x) => x.outcome === "wrong" || x.outcome === "error")) {
    problems.push(`${v.client < 0 ? "probe " : ""}#${v.id} ${v.stream ? "stream" : "non-stream"} ${v.outcome}: ${v.kind}${v.phase ? `, ${v.phase}` : ""}${v.message ? ` (${v.message.slice(0, 160)})` : ""}`);
  }
  for (const r of run.restarts) {
    if (r.readyAt === undefined) problems.push(`${r.target} killed at ${r.killAt.toFixed(0)} ms never answered /health again`);
    else if (r.rejoinMs !== undefined) {
      if (r.rejoinMs > 2000) problems.push(`${r.target} ready at ${r.readyAt.toFixed(0)} ms served its first answer ${r.rejoinMs.toFixed(0)} ms later`);
    } else if (r.killedAgainAt === undefined || r.killedAgainAt > r.readyAt + 2000) {
      // Killed again before it served: a failure only if it had had 2 s to serve in.
      problems.push(`${r.target} ready at ${r.readyAt.toFixed(0)} ms served no answer${r.killedAgainAt === undefined ? "" : ` before it was killed again at ${r.killedAgainAt.toFixed(0)} ms`}`);
    }
  }
  if (problems.length) {
    // Switchyard's own account (wrangler dev): each request's status and time to headers, anything it
    // logged, and whether wrangler reloaded (a source file saved mid-run drops every open stream).
    const file = join(tmpdir(), `switchyard-churn-test-${process.pid}.log`);
    writeFileSync(file, proxy.logs());
    const reloads = proxy.logs().split("\n").filter((l) => /reload/i.test(l));
    report += `\nSwitchyard's log: ${file}${reloads.length ? `\nwrangler reloaded during the run:\n${reloads.join("\n")}` : ""}`;
  }
  assert.equal(s.wrong + s.probes.wrong, 0, `${s.wrong + s.probes.wrong} wrong answers:\n${problems.join("\n")}\n\n${report}`);
  assert.deepEqual(problems, [], `${problems.length} problems (${s.exact} of ${s.answers} exact):\n${problems.join("\n")}\n\n${report}`);
});
