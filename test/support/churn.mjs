// The churn harness of issue 28: a pool of real llama-servers behind Switchyard (`wrangler dev`), a
// chaos loop that SIGKILLs one live server every few seconds and restarts it on the same port, and
// concurrent clients whose known-text answers are each judged exactly (test/support/churn-verdict.mjs).
// Used small by test/e2e/churn.test.mjs and large by bench/churn.mjs.
//
//   const pool = await startPool({ servers: 3 });
//   const proxy = await startChurnSwitchyard(pool);
//   const run = await runChurn({ url: proxy.url, pool, clients: 3, durationMs: 25_000, seed: 28 });
//   run.summary, run.verdicts, run.restarts, run.timeline
// A seeded generator, so a run's kills, delays and request mix repeat.
import { mulberry32 } from "../../scripts/gguf-writer.mjs";
import { performance } from "node:perf_hooks";
import { judge, rejoins, summarize, answerText } from "./churn-verdict.mjs";
import { literalGrammar, startLlamaServer } from "./llama-server.mjs";
import { startSwitchyard } from "./switchyard-dev.mjs";

/** @typedef {import("./llama-server.mjs").LlamaServer} LlamaServer */
/** @typedef {import("./churn-verdict.mjs").Observed} Observed */
/** @typedef {import("./churn-verdict.mjs").ServerEvent} ServerEvent */
/** @typedef {import("./churn-verdict.mjs").Restart} Restart */

/** The model name the pool serves under. */
export const MODEL = "churn";

/**
 * One server of the pool: its port stays the same across restarts; `server` is the live process.
 * @typedef {{ port: number, url: string, target: string, server: LlamaServer, state: "up" | "dead" | "loading" }} Member
 * @typedef {{ members: Member[], options: ServerOptions, stop(): Promise<void> }} Pool
 * @typedef {{ parallel: number, args: string[] }} ServerOptions
 */

/**
 * `servers` llama-servers with the tiny test model, as the issue runs them: `-np 2 -t 1 --poll 0`.
 * @param {{ servers?: number, parallel?: number, args?: string[] }} [opts]
 * @returns {Promise<Pool>}
 */
export async function startPool({ servers = 3, parallel = 2, args = ["--poll", "0"] } = {}) {
  const options = { parallel, args };
  const started = await Promise.allSettled(Array.from({ length: servers }, () => startLlamaServer({ parallel, threads: 1, args })));
  const live = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(live.map((s) => s.stop()));
    throw /** @type {PromiseRejectedResult} */ (failed).reason;
  }
  /** @type {Member[]} */
  const members = live.map((server) => ({ port: server.port, url: server.url, target: `llama:127.0.0.1:${server.port}`, server, state: "up" }));
  return { members, options, stop: () => Promise.all(members.map((m) => m.server.stop())).then(() => {}) };
}

/**
 * Switchyard under `wrangler dev` with one model whose targets are the pool, balanced `least-busy`;
 * everything else as configured by default (an operator's setup), unless `config` overrides it.
 * @param {Pool} pool @param {Record<string, unknown>} [config] more top-level configuration
 * @param {Record<string, unknown>} [model] more fields of the model
 */
export function startChurnSwitchyard(pool, config = {}, model = {}) {
  const targets = pool.members.map((m) => ({ kind: "llama", url: m.url }));
  return startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models: { [MODEL]: { targets, balance: "least-busy", ...model } }, ...config } } });
}


const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * The chaos loop: every `killEveryMs` (a random span in the range) one live server is SIGKILLed —
 * only while another is up (its /health answered 200 and it was not killed since), so one is up at
 * every moment — and restarted on its port `restartAfterMs` after the kill. Kills stop at
 * `durationMs`; restarts still pending are completed.
 * @param {{ pool: Pool, now: () => number, rng: () => number, durationMs: number, killEveryMs: [number, number], restartAfterMs: [number, number] }} o
 */
function startChaos({ pool, now, rng, durationMs, killEveryMs, restartAfterMs }) {
  /** @type {ServerEvent[]} */
  const timeline = [];
  /** @type {Restart[]} */
  const restarts = [];
  /** @type {Promise<void>[]} */
  const pending = [];
  let minUp = pool.members.length;
  let skipped = 0;
  let finished = 0;
  const span = (/** @type {[number, number]} */ [lo, hi]) => lo + rng() * (hi - lo);
  const record = (/** @type {Member} */ m, /** @type {ServerEvent["kind"]} */ kind, note = "") => timeline.push({ at: now(), target: m.target, kind, ...(note ? { note } : {}) });
  const countUp = () => {
    const n = pool.members.filter((m) => m.state === "up").length;
    minUp = Math.min(minUp, n);
  };
  /** A process exiting that we did not kill is a crash (recorded; the pool then has one fewer up). */
  const watch = (/** @type {Member} */ m) => {
    const proc = m.server;
    proc.exited.then(() => {
      if (m.server === proc && m.state === "up") {
        m.state = "dead";
        record(m, "crash");
        countUp();
      }
    });
  };
  pool.members.forEach(watch);

  /** @param {Member} m @param {Restart} r @param {number} at */
  async function restart(m, r, at) {
    try {
      await respawn(m, r, at);
    } finally {
      finished++;
    }
  }

  /** @param {Member} m @param {Restart} r @param {number} at */
  async function respawn(m, r, at) {
    await m.server.exited;
    record(m, "exit");
    await sleep(at - now());
    for (let attempt = 0; attempt < 10; attempt++) {
      m.state = "loading";
      r.spawnAt ??= now();
      record(m, "spawn");
      try {
        m.server = await startLlamaServer({ port: m.port, parallel: pool.options.parallel, threads: 1, args: pool.options.args });
        m.state = "up";
        r.readyAt = now();
        record(m, "ready");
        watch(m);
        return;
      } catch (e) {
        // The port may still be held a moment after the kill: try again on it.
        record(m, "spawn-failed", String(e instanceof Error ? e.message : e).split("\n")[0]);
        await sleep(300);
      }
    }
    m.state = "dead";
  }

  const loop = (async () => {
    let next = span(killEveryMs);
    for (;;) {
      await sleep(next - now());
      if (now() >= durationMs) break;
      const up = pool.members.filter((m) => m.state === "up");
      if (up.length < 2) {
        // Killing now would leave none up: wait for a restart to finish.
        skipped++;
        next = now() + 100;
        continue;
      }
      const m = /** @type {Member} */ (up[Math.floor(rng() * up.length)]);
      m.state = "dead";
      const killAt = now();
      record(m, "kill");
      m.server.kill("SIGKILL");
      countUp();
      /** @type {Restart} */
      const r = { target: m.target, killAt };
      restarts.push(r);
      pending.push(restart(m, r, killAt + span(restartAfterMs)));
      next = killAt + span(killEveryMs);
    }
    await Promise.all(pending);
  })();
  return {
    timeline,
    restarts,
    done: loop,
    /** The last restart's readiness (Infinity if one never became ready). */
    lastReady: () => Math.max(0, ...restarts.map((r) => r.readyAt ?? Infinity)),
    /** Every restart begun is over (ready, or given up). */
    settled: () => finished === restarts.length,
    stats: () => ({ minUp, skipped }),
  };
}

/**
 * Whose conversation a request continues, which decides its placement (a conversation stays on the
 * server holding its prompt unless waiting there is slower): `shared`, the same prompt for all (as
 * the issue measured: answers gather on one server and wait for its slots, so a death meets several
 * at once, and the pool is often full); `client`, one per client (an agent going on with its
 * session); `request`, a new one each time (spread over the pool by the fewest conversations).
 * @typedef {"request" | "client" | "shared"} Prompts
 */

/**
 * One request and everything the client saw of it, with times from `now()`.
 * @param {{ url: string, id: number, client: number, stream: boolean, expected: string, prompt: string, now: () => number, timeoutMs: number }} o
 * @returns {Promise<Observed>}
 */
async function ask({ url, id, client, stream, expected, prompt, now, timeoutMs }) {
  /** @type {Observed} */
  const o = { id, client, stream, expected, sentAt: now(), endAt: 0 };
  const body = {
    model: MODEL,
    stream,
    messages: [{ role: "user", content: prompt }],
    temperature: 0,
    // Room for the text however finely the grammar splits it (at most a token a character).
    max_tokens: expected.length + 32,
    grammar: literalGrammar(expected),
  };
  const signal = AbortSignal.timeout(timeoutMs);
  /** @type {Response} */
  let res;
  try {
    res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
  } catch (e) {
    o.failure = describe(e);
    o.endAt = now();
    return o;
  }
  o.headersAt = now();
  o.status = res.status;
  o.headers = { target: res.headers.get("x-switchyard-target") ?? "", attempts: res.headers.get("x-switchyard-attempts") ?? "", outcomes: res.headers.get("x-switchyard-outcomes") ?? "" };
  try {
    if (stream && res.status === 200) {
      o.frames = [];
      o.keepAlives = 0;
      const decoder = new TextDecoder();
      let buf = "";
      for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (res.body)) {
        buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const lines = block.split("\n").filter((l) => l !== "");
          const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
          if (data.length) o.frames.push({ at: now(), data: data.join("\n") });
          else if (lines.length) o.keepAlives++;
        }
      }
      if (buf.trim()) o.frames.push({ at: now(), data: buf.replace(/^data: ?/, "") });
    } else {
      o.body = await res.text();
    }
  } catch (e) {
    o.failure = describe(e);
  }
  o.endAt = now();
  return o;
}

/** @param {unknown} e */
function describe(e) {
  if (!(e instanceof Error)) return String(e);
  const cause = /** @type {any} */ (e).cause;
  return `${e.name}: ${e.message}${cause ? ` (${cause.code ?? cause.message ?? cause})` : ""}`;
}

/** Probes' ids start here, so their texts differ from every client's. */
const PROBE_IDS = 1_000_000;
/** At most this many probes at once (one every probeEveryMs while a restarted server waits to rejoin). */
const MAX_PROBES_IN_FLIGHT = 4;

/**
 * A run: `clients` clients send requests back to back (`streamShare` of them streamed, seeded) for
 * answers of `words` known words, for `durationMs`, with the chaos loop killing and restarting
 * servers when `chaos` is set. With chaos, the clients go on after the duration until every restarted
 * server has served an answer or had `rejoinWindowMs` of traffic to do it in (at most `tailMs` more).
 *
 * A restarted server's rejoin is its first answer through Switchyard. The clients' own traffic may
 * not need it (a shared conversation stays on the servers holding its prompt while they keep up), so
 * while one restarted server has served nothing since its restart a prober sends, every `probeEveryMs`
 * without waiting for the last (one waiting for a slot on a busy server would hold the next back by an
 * answer's time: the last restart's rejoin read 1–2.8 s, the others' ~0.15 s), a short streamed
 * answer in a new conversation, which placement sends where the fewest conversations live: a server
 * back from the dead, once Switchyard lets it in. Probes are judged like every answer and counted
 * apart (`probes`), out of the latency figures.
 * @param {{ url: string, pool: Pool, clients?: number, durationMs: number, seed?: number, words?: number, streamShare?: number,
 *           prompts?: Prompts, chaos?: false | { killEveryMs?: [number, number], restartAfterMs?: [number, number] }, timeoutMs?: number,
 *           rejoinWindowMs?: number, tailMs?: number, probeEveryMs?: number, onAnswer?: (o: Observed) => void }} o
 */
export async function runChurn({ url, pool, clients = 4, durationMs, seed = 28, words = 10, streamShare = 0.7, prompts = "shared", chaos = {}, timeoutMs = 45_000, rejoinWindowMs = 5000, tailMs = 15_000, probeEveryMs = 250, onAnswer }) {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const chaosRun = chaos
    ? startChaos({ pool, now, rng: mulberry32(seed), durationMs, killEveryMs: chaos.killEveryMs ?? [2000, 5000], restartAfterMs: chaos.restartAfterMs ?? [2000, 4000] })
    : undefined;
  /** When each server was last seen writing an answer (its first text reaching a client). */
  /** @type {Map<string, number>} */
  const lastServed = new Map();
  const served = (/** @type {Observed} */ o) => {
    for (const seg of judge(o).segments) lastServed.set(seg.target, Math.max(seg.at, lastServed.get(seg.target) ?? -Infinity));
  };
  /** Restarted servers, ready, that have served nothing since and may still rejoin in the window. */
  const waitingToRejoin = () => {
    const t = now();
    return (chaosRun?.restarts ?? []).some((r) => {
      const later = chaosRun?.restarts.some((x) => x.target === r.target && x.killAt > r.killAt);
      if (later || r.spawnAt === undefined || r.readyAt === undefined || t >= r.readyAt + rejoinWindowMs) return false;
      return (lastServed.get(r.target) ?? -Infinity) < r.spawnAt;
    });
  };
  const stopped = () => {
    const t = now();
    if (t < durationMs) return false;
    if (!chaosRun || t >= durationMs + tailMs) return true;
    return chaosRun.settled() && !waitingToRejoin();
  };
  let nextId = 1;
  /** @type {Observed[]} */
  const observed = [];
  /** @type {Observed[]} */
  const probed = [];
  const prober = async () => {
    /** Probes in flight: a probe placed on a busy server waits there for a slot (an answer or more), and the next must not wait for it. */
    const inFlight = new Set();
    for (let n = PROBE_IDS; !stopped(); ) {
      if (!waitingToRejoin() || inFlight.size >= MAX_PROBES_IN_FLIGHT) {
        await sleep(50);
        continue;
      }
      const id = n++;
      const probe = ask({ url, id, client: -1, stream: true, expected: answerText(id, 2), prompt: `probe ${id}`, now, timeoutMs }).then((o) => {
        probed.push(o);
        served(o);
      });
      inFlight.add(probe);
      void probe.finally(() => inFlight.delete(probe));
      await sleep(probeEveryMs);
    }
    await Promise.all(inFlight);
  };
  await Promise.all([
    ...(chaosRun ? [prober()] : []),
    ...Array.from({ length: clients }, async (_, client) => {
      const rng = mulberry32(seed * 1000 + client + 1);
      while (!stopped()) {
        const id = nextId++;
        const prompt = prompts === "request" ? `request ${id}` : prompts === "client" ? `client ${client}` : "go";
        const o = await ask({ url, id, client, stream: rng() < streamShare, expected: answerText(id, words), prompt, now, timeoutMs });
        observed.push(o);
        served(o);
        onAnswer?.(o);
      }
    }),
  ]);
  await chaosRun?.done;
  const verdicts = observed.sort((a, b) => a.id - b.id).map(judge);
  const probes = probed.map(judge);
  const timeline = chaosRun?.timeline ?? [];
  const restarts = rejoins(chaosRun?.restarts ?? [], [...verdicts, ...probes]);
  return {
    verdicts,
    probes,
    timeline,
    restarts,
    summary: summarize(verdicts, restarts, timeline, probes),
    chaos: chaosRun?.stats(),
    elapsedMs: now(),
  };
}
