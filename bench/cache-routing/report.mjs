// Summaries, tables and the docs/benchmarks.md section of bench/cache-routing.mjs.

export const SECTION_HEADING = "## Cache-aware routing across llama-servers";
export const START = "<!-- cache-routing:start (written by bench/cache-routing.mjs --write) -->";
export const START_PREFIX = "<!-- cache-routing:start";
export const END = "<!-- cache-routing:end -->";

/**
 * One request as measured.
 * @typedef {{ cell: string, strategy: string, conversations: number, concurrency: number | "all",
 *   conversation: number, turn: number, seq: number, model: string, server: "A" | "B", target: string,
 *   attempts: number | null, promptTokens: number, cachedTokens: number, completionTokens: number | null,
 *   ms: number, sentAtMs: number }} RequestRecord
 *   `seq`: the request's place in the cell's send order (0-based); `sentAtMs`: since the cell's first request
 */

/**
 * The measures of one cell.
 * @typedef {{ cell: string, strategy: string, conversations: number, concurrency: number | "all",
 *   requests: number, laterTurns: number, promptTokens: number, cachedTokens: number, reuse: number,
 *   ceiling: number, moves: number, split: string, p50: number, p99: number, runMs: number, startMs: number }} CellSummary
 *   `promptTokens`, `cachedTokens`, `reuse` over turns ≥ 2; `ceiling`: the reuse if every such turn had reused
 *   its conversation's whole previous prompt (Σ previous prompt_tokens / Σ prompt_tokens); `runMs` from the
 *   first request sent to the last stream's end; `startMs` starting the two llama-servers and Switchyard
 */

/**
 * Nearest-rank percentile.
 * @param {number[]} xs
 * @param {number} p
 */
export function percentile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * @param {RequestRecord[]} records one cell's
 * @param {{ cell: string, strategy: string, conversations: number, concurrency: number | "all", runMs: number, startMs: number }} cell
 * @returns {CellSummary}
 */
export function summarize(records, cell) {
  const later = records.filter((r) => r.turn >= 2);
  const promptTokens = later.reduce((a, r) => a + r.promptTokens, 0);
  const cachedTokens = later.reduce((a, r) => a + r.cachedTokens, 0);
  /** @type {Map<number, RequestRecord[]>} */
  const byConversation = new Map();
  for (const r of records) {
    const list = byConversation.get(r.conversation) ?? [];
    list.push(r);
    byConversation.set(r.conversation, list);
  }
  let moves = 0;
  let previousPrompts = 0;
  let onA = 0;
  let onB = 0;
  for (const list of byConversation.values()) {
    list.sort((a, b) => a.turn - b.turn);
    if (list[0].server === "A") onA++;
    else onB++;
    for (let k = 1; k < list.length; k++) {
      if (list[k].server !== list[k - 1].server) moves++;
      previousPrompts += list[k - 1].promptTokens;
    }
  }
  const ms = records.map((r) => r.ms);
  return {
    ...cell,
    requests: records.length,
    laterTurns: later.length,
    promptTokens,
    cachedTokens,
    reuse: promptTokens ? cachedTokens / promptTokens : NaN,
    ceiling: promptTokens ? previousPrompts / promptTokens : NaN,
    moves,
    split: `${onA}/${onB}`,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
  };
}

const pct = (/** @type {number} */ x) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)} %` : "—");

/**
 * The markdown table of one N: a row per cell, in the order run.
 * @param {CellSummary[]} cells all of one N
 */
export function table(cells) {
  const rows = [
    "| in flight | strategy | reuse | reuse ÷ pinned | moves | split | p50 ms | p99 ms |",
    "|---|---|---:|---:|---:|---|---:|---:|",
  ];
  for (const c of cells) {
    const pinned = cells.find((p) => p.strategy === "pinned" && p.concurrency === c.concurrency);
    const ratio = pinned && pinned.reuse > 0 ? (c.reuse / pinned.reuse).toFixed(2) : "—";
    rows.push(
      `| ${c.concurrency} | ${c.strategy} | ${pct(c.reuse)} | ${ratio} | ${c.moves} / ${c.laterTurns} | ${c.split} | ${Math.round(c.p50)} | ${Math.round(c.p99)} |`,
    );
  }
  return rows.join("\n");
}

/**
 * Every N's table with a heading line.
 * @param {CellSummary[]} cells
 * @param {number} turns
 */
export function tables(cells, turns) {
  const ns = [...new Set(cells.map((c) => c.conversations))];
  return ns
    .map((n) => `**${n} conversations × ${turns} turns** (${n * turns} requests per row)\n\n${table(cells.filter((c) => c.conversations === n))}`)
    .join("\n\n");
}

/**
 * Replaces the text between the markers, or adds the section (heading and markers) at the end.
 * Nothing else of the file changes.
 * @param {string} text the whole file
 * @param {string} body what goes between the markers
 */
export function spliceSection(text, body) {
  const i = text.indexOf(START_PREFIX);
  const j = text.indexOf(END);
  const block = `${START}\n\n${body.trim()}\n\n${END}`;
  if (i >= 0 && j > i) return text.slice(0, i) + block + text.slice(j + END.length);
  if (i >= 0 || j >= 0) throw new Error(`docs/benchmarks.md has only one of the cache-routing markers`);
  const h = text.indexOf(`${SECTION_HEADING}\n`);
  if (h >= 0) {
    const after = h + SECTION_HEADING.length + 1;
    return `${text.slice(0, after)}\n${block}\n${text.slice(after)}`;
  }
  return `${text.replace(/\n*$/, "\n")}\n${SECTION_HEADING}\n\n${block}\n`;
}
