// Summaries, the table and the docs/benchmarks.md block of bench/agent-pool.mjs.

export const HEADING = "## A team of agents on a pool of llama-servers";
export const START = "<!-- agent-pool:start (written by bench/agent-pool.mjs --write) -->";
export const END = "<!-- agent-pool:end -->";

/**
 * One turn as measured.
 * @typedef {{ strategy: string, session: number, turn: number, kind: string, server: number | null,
 *   sentAtMs: number, ok: boolean, status: number, error?: string, ttftMs: number | null, ms: number,
 *   promptTokens: number, cachedTokens: number, completionTokens: number }} TurnRecord
 *   `server`: index of the server that answered (null when none did); `sentAtMs`: since the strategy's start
 */

/**
 * @typedef {{ strategy: string, requests: number, ok: number, refused: number, timedOut: number,
 *   p50: number, p99: number, spanS: number, tokensPerS: number, turnsPerS: number, reuse: number,
 *   moves: number, laterTurns: number, split: string }} Summary
 */

/** Nearest-rank percentile. @param {number[]} xs @param {number} p */
export function percentile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * @param {string} strategy
 * @param {TurnRecord[]} records this strategy's
 * @param {number} servers
 * @returns {Summary}
 */
export function summarize(strategy, records, servers) {
  const ok = records.filter((r) => r.ok);
  const timedOut = records.filter((r) => !r.ok && /timeout|abort/i.test(r.error ?? "")).length;
  const first = Math.min(...records.map((r) => r.sentAtMs));
  const last = Math.max(...records.map((r) => r.sentAtMs + r.ms));
  const spanS = (last - first) / 1000;
  const prompt = ok.reduce((a, r) => a + r.promptTokens, 0);
  const cached = ok.reduce((a, r) => a + r.cachedTokens, 0);
  const generated = ok.reduce((a, r) => a + r.completionTokens, 0);
  let moves = 0;
  let laterTurns = 0;
  const perServer = Array.from({ length: servers }, () => 0);
  /** @type {Map<number, TurnRecord[]>} */
  const bySession = new Map();
  for (const r of records) bySession.set(r.session, [...(bySession.get(r.session) ?? []), r]);
  for (const list of bySession.values()) {
    list.sort((a, b) => a.turn - b.turn);
    for (let k = 0; k < list.length; k++) {
      const s = list[k].server;
      if (s !== null) perServer[s]++;
      if (k === 0) continue;
      const before = list[k - 1].server;
      if (s === null || before === null) continue;
      laterTurns++;
      if (s !== before) moves++;
    }
  }
  const ttfts = ok.map((r) => /** @type {number} */ (r.ttftMs));
  return {
    strategy,
    requests: records.length,
    ok: ok.length,
    refused: records.length - ok.length - timedOut,
    timedOut,
    p50: percentile(ttfts, 50),
    p99: percentile(ttfts, 99),
    spanS,
    tokensPerS: (prompt + generated) / spanS,
    turnsPerS: ok.length / spanS,
    reuse: prompt ? cached / prompt : NaN,
    moves,
    laterTurns,
    split: perServer.join("/"),
  };
}

const s1 = (/** @type {number} */ ms) => (ms / 1000).toFixed(2);

/**
 * The table: a row per strategy, with ratios to the pinned row.
 * @param {Array<Summary & { cpu?: { servers: number, proxy: number } }>} rows
 */
export function table(rows) {
  const pinned = rows.find((r) => r.strategy === "pinned");
  const ratio = (/** @type {number} */ x, /** @type {number | undefined} */ base) => (base ? ` (${(x / base).toFixed(2)}×)` : "");
  const out = [
    "| strategy | p50 TTFT s | p99 TTFT s | tokens/s | turns/s | prompt-cache reuse | goodput | refused / timed out | moves | turns per server | CPU s: servers / proxy |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
  ];
  for (const r of rows) {
    out.push(
      `| ${r.strategy} | ${s1(r.p50)}${ratio(r.p50, pinned?.p50)} | ${s1(r.p99)}${ratio(r.p99, pinned?.p99)} | ${Math.round(r.tokensPerS)} | ${r.turnsPerS.toFixed(3)} | ` +
        `${(100 * r.reuse).toFixed(1)} % | ${((100 * r.ok) / r.requests).toFixed(1)} % (${r.ok}/${r.requests}) | ${r.refused} / ${r.timedOut} | ${r.moves} / ${r.laterTurns} | ${r.split} | ${r.cpu ? `${r.cpu.servers.toFixed(0)} / ${r.cpu.proxy.toFixed(0)}` : "—"} |`,
    );
  }
  return out.join("\n");
}

/**
 * Whether the run meets issue 47's targets, one line each.
 * @param {Summary[]} rows
 */
export function verdict(rows) {
  const sy = rows.find((r) => r.strategy === "switchyard");
  const pinned = rows.find((r) => r.strategy === "pinned");
  if (!sy || !pinned) return [];
  const others = rows.filter((r) => r !== sy);
  const lines = [
    `p99 TTFT ≤ 1.2 × pinned: ${sy.p99 <= 1.2 * pinned.p99 ? "yes" : "no"} (${(sy.p99 / pinned.p99).toFixed(2)}×)`,
    ...others
      .filter((r) => r !== pinned)
      .map((r) => `p99 TTFT below ${r.strategy}'s: ${sy.p99 < r.p99 ? "yes" : "no"} (${s1(sy.p99)} s vs ${s1(r.p99)} s)`),
    ...others.map((r) => `throughput ≥ ${r.strategy}'s: ${sy.tokensPerS >= r.tokensPerS ? "yes" : "no"} (${Math.round(sy.tokensPerS)} vs ${Math.round(r.tokensPerS)} tokens/s)`),
    `goodput 100 %: ${sy.ok === sy.requests ? "yes" : "no"} (${sy.ok}/${sy.requests})`,
  ];
  return lines;
}
