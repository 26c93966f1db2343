// The latency budget of the proxy's own work: a CPU profile of the Worker's isolate (taken by
// profile-worker.mjs --stages) split into the pipeline's stages, each sample given to the stage of the
// innermost src/ function on its stack (a library's frames count for the src/ code that called them),
// and set against each stage's budget. In workerd the clock does not move while JavaScript runs, so a
// stage cannot time itself; the sampling profiler is the one measure of a stage's CPU there.

/**
 * The stages, in a request's order, and the src/ paths whose code is theirs (the first prefix that
 * matches wins, so a file listed early is taken out of a folder listed later). Budget: the most µs of
 * the profile a stage may take per request, non-stream and stream alike (`keyedBudget`: with a key
 * that has limits, whose JS-RPC calls and KeyGate work land in these stages): ceilings at the largest
 * of two runs' figures on 7 Dec 2026 plus about a fifth (the profile of the same build moves by up
 * to 40 % between runs on the shared cores), so only a "no" that repeats means a stage got dearer;
 * the KeyGate's is what its scan cost was cut to (4.3–5.9 ms before). The target itself
 * (≤ 1.5 ms added over the bare pass-through Worker) is judged on the table's "own CPU" row.
 * @type {Array<{ stage: string, paths: string[], budget: number, keyedBudget?: number, what: string }>}
 */
export const STAGES = [
  { stage: "framework", paths: ["src/index.ts", "src/app.ts", "src/middleware/request-id.ts", "src/middleware/cors.ts", "src/errors/", "hono"], budget: 450, keyedBudget: 650, what: "the Worker's entry, Hono's router and context, request id, CORS" },
  { stage: "auth", paths: ["src/middleware/auth.ts", "src/auth/principal.ts", "src/auth/credential.ts", "src/auth/key-directory.ts", "src/auth/key-format.ts", "src/auth/scopes.ts"], budget: 200, keyedBudget: 1450, what: "the credential, the key's record (cached per isolate), its scope" },
  { stage: "key gate", paths: ["src/auth/key-gate.ts", "src/auth/limit-math.ts", "src/auth/usage-label.ts"], budget: 50, keyedBudget: 1000, what: "the KeyGate Durable Object's side: admission, reservation, settling (SQLite)" },
  { stage: "read and validate", paths: ["src/routes/generate.ts", "src/http/read-json-body.ts", "src/http/read-capped.ts", "src/http/decode-body.ts", "src/api/chat/index.ts", "src/api/validate-body.ts", "src/api/door.ts", "src/schemas/", "src/config/"], budget: 750, keyedBudget: 900, what: "the body read and parsed, the door's zod/mini schema, the configuration read" },
  { stage: "plan", paths: ["src/routing/pipeline.ts", "src/routing/plan-targets.ts", "src/routing/request-scope.ts", "src/routing/isolate/"], budget: 150, what: "model → targets, the request's scope" },
  { stage: "admission", paths: ["src/routing/admission/"], budget: 100, what: "the model's line (a turn when every slot is taken)" },
  { stage: "placement", paths: ["src/routing/placement/"], budget: 80, what: "targets ordered: balance, health snapshot, prompt-cache placement, context fit" },
  { stage: "attempt", paths: ["src/routing/attempt/", "src/routing/continuation/", "src/upstreams/", "src/http/", "src/events/", "src/lib/"], budget: 1700, keyedBudget: 2700, what: "the upstream request, its SSE read into events, deadlines, the attempt's record" },
  { stage: "health", paths: ["src/health/"], budget: 120, keyedBudget: 150, what: "health signals and the isolate's reports" },
  { stage: "rewrite", paths: ["src/routing/rewrite/", "src/toolcalls/"], budget: 30, what: "the tool-call rewriter's stage (no tools here: a pass)" },
  { stage: "meter", paths: ["src/auth/meter.ts", "src/observability/run-facts.ts", "src/observability/answer-facts.ts"], budget: 20, keyedBudget: 1000, what: "the key's reservation and usage following the events; the run's facts" },
  { stage: "log", paths: ["src/middleware/observe-requests.ts", "src/observability/"], budget: 150, what: "the request log's record and batch (traces off)" },
  { stage: "encode", paths: ["src/responders/", "src/api/", "src/routes/"], budget: 750, what: "events → the chat completion (aggregated) or its SSE frames" },
];
/** Samples outside every stage: V8's own work, and JavaScript with no src/ frame on its stack. */
const RUNTIME = { stage: "runtime (garbage collector, V8, workerd's JS glue)", budget: 1000, keyedBudget: 2600 };

/**
 * @typedef {{ nodes: Array<{ id: number, parent?: number, children?: number[], callFrame: { functionName: string, url: string, lineNumber: number } }>, samples: number[], timeDeltas: number[] }} CpuProfile
 */

/**
 * The source file of each line of an unminified esbuild bundle, from its `// path` module markers.
 * @param {string} bundle
 */
function fileOfLine(bundle) {
  /** @type {Array<[number, string]>} */
  const marks = [];
  bundle.split("\n").forEach((line, i) => {
    const m = /^\/\/ (\S+\.(?:ts|js|mjs|cjs))$/.exec(line);
    if (m) marks.push([i, m[1]]);
  });
  return (/** @type {number} */ line) => {
    let lo = 0;
    let hi = marks.length - 1;
    let found = "";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid][0] <= line) {
        found = marks[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** The stage of a source path, or null for a library's code (which counts for its caller). */
function stageOfPath(/** @type {string} */ path) {
  const src = path.indexOf("src/");
  const nm = path.lastIndexOf("node_modules/");
  const rel = nm >= 0 ? path.slice(nm + "node_modules/".length) : src >= 0 ? path.slice(src) : path;
  for (const s of STAGES) if (s.paths.some((p) => rel.startsWith(p))) return s.stage;
  return null;
}

/**
 * The isolate's CPU per request by stage, in µs: each sample to the innermost frame on its stack that
 * belongs to a stage; idle samples left out.
 * @param {CpuProfile} profile @param {string} bundle the unminified bundle the profile ran @param {number} requests
 * @returns {Record<string, number>}
 */
export function stagesOf(profile, bundle, requests) {
  const fileOf = fileOfLine(bundle);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** @type {Map<number, string | null>} */
  const memo = new Map();
  /** @returns {string | null} */
  const stageOfNode = (/** @type {number} */ id) => {
    if (memo.has(id)) return memo.get(id) ?? null;
    const node = byId.get(id);
    if (!node) throw new Error(`a sample names node ${id}, which the profile does not have`);
    const f = node.callFrame;
    let stage = f.url && /index\.js$/.test(f.url) ? stageOfPath(fileOf(f.lineNumber)) : null;
    if (stage === null) {
      const up = parent.get(id);
      stage = up === undefined ? null : stageOfNode(up);
    }
    memo.set(id, stage);
    return stage;
  };
  /** @type {Record<string, number>} */
  const out = Object.fromEntries([...STAGES.map((s) => [s.stage, 0]), [RUNTIME.stage, 0]]);
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const name = byId.get(id)?.callFrame.functionName;
    if (name === "(idle)") return;
    const stage = stageOfNode(id) ?? RUNTIME.stage;
    out[stage] += dt;
  });
  for (const k of Object.keys(out)) out[k] /= requests;
  return out;
}

/**
 * The doc's block: one column per run, one row per stage, its budget and whether every run is within.
 * @param {Array<{ name: string, stream: boolean, wallMs: number, cpuUs?: number, bareUs?: number, stages: Record<string, number> }>} runs
 * @param {{ requests: number, rev: string, command: string }} meta
 */
export function stageTable(runs, meta) {
  const rows = [...STAGES, RUNTIME];
  const us = (/** @type {number} */ n) => n.toFixed(0);
  const head = `| stage | ${runs.map((r) => `${r.stream ? "stream" : "non-stream"}, ${r.name}`).join(" | ")} | budget | within | what it is |`;
  const sep = `|---|${runs.map(() => "---:").join("|")}|---:|---|---|`;
  /** A stage's budget for run `r`: its keyed one for a run with a key. */
  const budgetOf = (/** @type {{ budget: number, keyedBudget?: number }} */ s, /** @type {typeof runs[number]} */ r) => (r.name !== "no keys" ? (s.keyedBudget ?? s.budget) : s.budget);
  const body = rows.map((s) => {
    const vals = runs.map((r) => r.stages[s.stage] ?? 0);
    const within = runs.every((r, i) => vals[i] <= budgetOf(s, r)) ? "yes" : "**no**";
    const budget = s.keyedBudget === undefined ? `${s.budget}` : `${s.budget} (key: ${s.keyedBudget})`;
    return `| ${s.stage} | ${vals.map(us).join(" | ")} | ${budget} | ${within} | ${"what" in s ? s.what : "V8's garbage collector and compiler, workerd's streams and fetch glue"} |`;
  });
  const totals = runs.map((r) => Object.values(r.stages).reduce((a, b) => a + b, 0));
  const budgets = runs.map((r) => rows.reduce((a, s) => a + budgetOf(s, r), 0));
  const open = runs.filter((r) => r.name === "no keys");
  const waits = runs.map((r, i) => {
    const base = open.find((o) => o.stream === r.stream);
    if (!base || base === r) return "—";
    const j = runs.indexOf(base);
    return `+${(r.wallMs * 1000 - base.wallMs * 1000 - (totals[i] - totals[j])).toFixed(0)}`;
  });
  return [
    `\`${meta.command}\` — ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, at ${meta.rev}; Miniflare (one workerd), the fast upstream's 16-token answer, ${meta.requests} sequential requests per column after 300 unprofiled ones, V8's sampling profiler at 100 µs through workerd's inspector. µs of the isolate's CPU per request (the Worker and its Durable Objects, one isolate under Miniflare).`,
    "",
    head,
    sep,
    ...body,
    `| **all stages** | ${totals.map((t) => `**${us(t)}**`).join(" | ")} | ${[...new Set(budgets)].join(" / ")} | ${totals.every((t, i) => t <= budgets[i]) ? "yes" : "**no**"} | the isolate's busy time per request (the budgets' sum: without a key / with one) |`,
    `| workerd's CPU per request, unprofiled (all its threads) | ${runs.map((r) => (r.cpuUs === undefined ? "—" : us(r.cpuUs))).join(" | ")} | | | the same requests before the profiler started: what the profile's figures are inflated from |`,
    `| the bare pass-through Worker's CPU per request, unprofiled | ${runs.map((r) => (r.bareUs === undefined ? "—" : us(r.bareUs))).join(" | ")} | | | the runtime's floor (bench/passthrough-worker), in a workerd of its own |`,
    `| **Switchyard's own CPU per request (unprofiled, over the floor)** | ${runs.map((r) => (r.cpuUs === undefined || r.bareUs === undefined ? "—" : `**+${us(r.cpuUs - r.bareUs)}**`)).join(" | ")} | | | what the target (≤ 1.5 ms of added latency over the floor) is about: latency follows CPU one for one here (bench/overhead/NOTES.md) |`,
    `| client's wall time per request | ${runs.map((r) => us(r.wallMs * 1000)).join(" | ")} | | | request sent to body read, the upstream and the client included |`,
    `| waiting added by the key (wall minus CPU, over no keys) | ${waits.join(" | ")} | | | the KeyGate's round trips as the client sees them |`,
  ].join("\n");
}
