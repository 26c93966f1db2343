#!/usr/bin/env node
// Answers while servers die and come back (issue 28), at the issue's size: real llama-servers with the
// tiny test model (`-np 2 -t 1 --poll 0`) behind Switchyard (`wrangler dev`, one model over all of
// them, `balance: "least-busy"`, defaults otherwise); clients stream (70 %) or not (30 %) answers of
// about 60 tokens whose text a one-literal grammar fixes, each judged exactly
// (test/support/churn-verdict.mjs). First a calm run (no deaths), then the same load while one live
// server is SIGKILLed every 2–5 s and restarted on its port 2–4 s later (never none up).
//
//   flock /tmp/sy-servers.lock npx node bench/churn.mjs [--servers 3] [--clients 4] [--duration 60]
//        [--calm 30] [--seed 28] [--words 10] [--prompts shared|client|request] [--write] [--tree]
//
// --prompts: whose conversation each request continues, which decides where it is placed: one prompt
// for all (the default, as the issue measured), one per client (an agent's session), or a new one per
// request (spread over the pool).
// Switchyard runs from a snapshot of the last commit (git archive HEAD): `wrangler dev` reloads on
// any change under src/, which would drop every open stream mid-run while others edit the tree.
// --tree runs the working tree instead.
//
// Prints exact %, clean errors by kind, continuations, wrong answers, p50/p99 latency per outcome in
// churn and calm, each restart's rejoin (its /health 200 → its first answer through Switchyard), the
// deaths answers met by phase, and every answer that was not exact with what its servers were doing.
// Switchyard's log (wrangler dev) is saved beside. --write replaces the section between the churn
// markers in docs/reliability.md. Exits 1 if an answer was wrong. About 2 minutes on 2 shared cores.
import { execSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { formatDetails, formatSummary, percentile } from "../test/support/churn-verdict.mjs";
import { MODEL, runChurn, startChurnSwitchyard, startPool } from "../test/support/churn.mjs";

const { values: flags } = parseArgs({
  strict: true,
  options: {
    servers: { type: "string", default: "3" },
    clients: { type: "string", default: "4" },
    duration: { type: "string", default: "60" },
    calm: { type: "string", default: "30" },
    seed: { type: "string", default: "28" },
    words: { type: "string", default: "10" },
    prompts: { type: "string", default: "shared" },
    write: { type: "boolean", default: false },
    tree: { type: "boolean", default: false },
  },
});
const n = Number(flags.servers);
const clients = Number(flags.clients);
const seed = Number(flags.seed);
const words = Number(flags.words);
const prompts = /** @type {import("../test/support/churn.mjs").Prompts} */ (flags.prompts);
if (!["request", "client", "shared"].includes(prompts)) throw new Error(`--prompts ${prompts}: request, client or shared`);
const command = `npx node bench/churn.mjs --servers ${n} --clients ${clients} --duration ${flags.duration} --calm ${flags.calm} --seed ${seed} --words ${words} --prompts ${prompts}`;

/** @type {import("../test/support/churn.mjs").Pool | undefined} */
let pool;
/** @type {import("../test/support/switchyard-dev.mjs").Switchyard | undefined} */
let proxy;
const logFile = join(tmpdir(), `switchyard-churn-${process.pid}.log`);
let failed = false;
const repo = resolve(import.meta.dirname, "..");
const snapshot = flags.tree ? undefined : mkdtempSync(join(tmpdir(), "switchyard-churn-"));
if (snapshot) {
  execSync(`git archive HEAD | tar -x -C ${JSON.stringify(snapshot)}`, { cwd: repo });
  symlinkSync(join(repo, "node_modules"), join(snapshot, "node_modules"));
  process.chdir(snapshot);
}
const source = snapshot ? `HEAD ${execSync("git rev-parse --short HEAD", { cwd: repo, encoding: "utf8" }).trim()}` : "the working tree";
try {
  pool = await startPool({ servers: n });
  proxy = await startChurnSwitchyard(pool);
  const warm = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "warm" }], max_tokens: 4, grammar: 'root ::= "ok"' }),
  });
  if (warm.status !== 200) throw new Error(`warm-up: HTTP ${warm.status} ${await warm.text()}`);
  await warm.text();

  console.log(`# ${command}   (Switchyard from ${source})`);
  const calm = await runChurn({ url: proxy.url, pool, clients, durationMs: Number(flags.calm) * 1000, seed, words, prompts, chaos: false });
  for (const line of formatSummary(calm.summary, "calm")) console.log(line);
  const churn = await runChurn({ url: proxy.url, pool, clients, durationMs: Number(flags.duration) * 1000, seed, words, prompts });
  for (const line of formatSummary(churn.summary, "churn")) console.log(line);
  console.log(`  never fewer than ${churn.chaos?.minUp} servers up; ${churn.chaos?.skipped} kill ticks waited for a restart; ${(churn.elapsedMs / 1000).toFixed(1)} s`);
  console.log("restarts and answers that were not exact:");
  for (const line of formatDetails([...churn.verdicts, ...churn.probes], churn.restarts, churn.timeline)) console.log(line);
  const spawnFailures = churn.timeline.filter((e) => e.kind === "spawn-failed" || e.kind === "crash");
  for (const e of spawnFailures) console.log(`  ${e.kind} ${e.target} at ${(e.at / 1000).toFixed(2)}s ${e.note ?? ""}`);

  writeFileSync(logFile, proxy.logs());
  console.log(`Switchyard's log (wrangler dev): ${logFile}`);

  const section = docSection(calm.summary, churn.summary, churn.chaos?.minUp ?? 0);
  console.log(`\n${section}`);
  if (flags.write) {
    const file = new URL("../docs/reliability.md", import.meta.url);
    const doc = readFileSync(file, "utf8");
    const start = doc.indexOf("<!-- churn:start -->");
    const end = doc.indexOf("<!-- churn:end -->");
    if (start < 0 || end < start) throw new Error("docs/reliability.md has no churn markers");
    writeFileSync(file, doc.slice(0, start) + section + doc.slice(end + "<!-- churn:end -->".length));
    console.log("wrote docs/reliability.md");
  }
  failed = churn.summary.wrong > 0 || calm.summary.wrong > 0;
} finally {
  if (proxy) writeFileSync(logFile, proxy.logs());
  await proxy?.stop();
  await pool?.stop();
  if (snapshot) {
    process.chdir(repo);
    rmSync(snapshot, { recursive: true, force: true });
  }
}
process.exitCode = failed ? 1 : 0;

/**
 * The figures as docs/reliability.md shows them.
 * @param {import("../test/support/churn-verdict.mjs").Summary} calm @param {import("../test/support/churn-verdict.mjs").Summary} churn @param {number} minUp
 */
function docSection(calm, churn, minUp) {
  const s = (/** @type {number} */ ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "–");
  const lat = (/** @type {{ p50: number, p99: number, n: number }} */ l) => (l.n ? `${s(l.p50)} / ${s(l.p99)}` : "–");
  const ms = churn.rejoins.filter((r) => r.rejoinMs !== undefined).map((r) => /** @type {number} */ (r.rejoinMs));
  const cut = churn.rejoins.filter((r) => r.rejoinMs === undefined && r.killedAgainAt !== undefined).length;
  const never = churn.rejoins.length - ms.length - cut;
  const row = (/** @type {string} */ name, /** @type {string} */ a, /** @type {string} */ b) => `| ${name} | ${a} | ${b} |`;
  return [
    "<!-- churn:start -->",
    `\`${command} --write\` (bench/churn.mjs; Switchyard at ${source}; the same run's calm baseline first):`,
    "",
    "| | calm | churn |",
    "|---|---|---|",
    row("duration, deaths", `${flags.calm} s, 0`, `${flags.duration} s, ${churn.deaths} (never fewer than ${minUp} up)`),
    row("answers (stream)", `${calm.answers} (${calm.stream})`, `${churn.answers} (${churn.stream})`),
    row("**exact**", `${calm.exact} (${calm.exactPct.toFixed(1)} %)`, `**${churn.exact} (${churn.exactPct.toFixed(1)} %)**`),
    row("of which continued on another server", `${calm.continued}`, `${churn.continued} (${churn.resumes} continuations, ${churn.multiResumes} ${churn.multiResumes === 1 ? "answer" : "answers"} more than once)`),
    row("failed over before the first token", `${calm.failedOver}`, `${churn.failedOver}`),
    row("clean errors", `${calm.errors}`, `${churn.errors}`),
    row("**wrong** (text, ids, finish, `[DONE]`)", `${calm.wrong}`, `**${churn.wrong}**`),
    row("latency p50 / p99, all answers", lat(calm.latency.all), lat(churn.latency.all)),
    row("exact, not continued", lat(calm.latency.exact), lat(churn.latency.exact)),
    row("continued", lat(calm.latency.continued), lat(churn.latency.continued)),
    row("probes (a new conversation at a time while a restarted server has served nothing)", "–", `${churn.probes.sent}: ${churn.probes.exact} exact, ${churn.probes.errors} errors, ${churn.probes.wrong} wrong`),
    row("restarted server: /health 200 → first answer through Switchyard", "–", `p50 ${(percentile(ms, 50) / 1000).toFixed(2)} s, max ${(Math.max(...ms) / 1000).toFixed(2)} s${never ? `, ${never} never` : ""}${cut ? ` (${cut} killed again before serving)` : ""}`),
    "",
    ...(Object.keys(churn.errorKinds).length ? ["Clean errors in churn, by kind:", "", ...Object.entries(churn.errorKinds).map(([k, c]) => `- ${c} × ${k}`), ""] : []),
    ...(Object.keys(churn.byDeathPhase).length
      ? ["Deaths the answers met (a server the answer went to killed while it was in flight), by where the answer stood:", "", ...Object.entries(churn.byDeathPhase).map(([p, r]) => `- ${p}: ${Object.entries(r).map(([o, c]) => `${c} ${o}`).join(", ")}`), ""]
      : []),
    `Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at the end, 2 shared cores.`,
    "<!-- churn:end -->",
  ].join("\n");
}
