// Judges each answer of the churn harness (test/support/churn.mjs) against the text it had to be, and
// sums a run into the figures of issue 28: exact answers, clean errors by kind, continuations, wrong
// answers, latency per outcome, restarted servers' rejoin times, and the deaths answers met. Pure: the
// I/O side hands over what the client saw, with times in ms since the run began.

/**
 * What one client saw of one request.
 * @typedef {object} Observed
 * @property {number} id
 * @property {number} client
 * @property {boolean} stream
 * @property {string} expected the text the one-literal grammar forces
 * @property {number} sentAt
 * @property {number} [headersAt]
 * @property {number} endAt
 * @property {number} [status]
 * @property {{ target: string, attempts: string, outcomes: string }} [headers]
 * @property {Array<{ at: number, data: string }>} [frames] a stream's `data:` payloads, as they arrived
 * @property {number} [keepAlives] a stream's comment blocks
 * @property {string} [body] a non-stream body, or an error body
 * @property {string} [failure] the connection failed, broke, or the client gave up (no Switchyard error)
 *
 * One piece of an answer: the server that wrote it and when its first text reached the client.
 * @typedef {{ target: string, at: number, approx?: true }} Segment
 *
 * @typedef {"exact" | "continued" | "error" | "wrong"} Outcome
 * @typedef {object} Verdict
 * @property {number} id
 * @property {number} client
 * @property {boolean} stream
 * @property {Outcome} outcome exact and continued both delivered the exact text, continued after a resume
 * @property {string} kind for an error, `HTTP 503 model_loading` / `frame upstream_error` / `body upstream_error`; for wrong, what was wrong
 * @property {string} [phase] for an error: where the client stood
 * @property {number} chars content characters the client received
 * @property {number} [firstTextAt] when the first text reached the client (a body's: from its x_switchyard timings)
 * @property {number} sentAt
 * @property {number} endAt
 * @property {number} [headersAt]
 * @property {number} [failedAt] when the error (frame, status, envelope) reached the client
 * @property {number} [status]
 * @property {string} [message]
 * @property {{ target: string, attempts: string, outcomes: string }} [headers]
 * @property {any} [ext] x_switchyard
 * @property {Segment[]} segments
 */

/**
 * The text request `id` must get back: `words` words carrying the request's number (a different text
 * per request, so an answer delivered to the wrong request or spliced from two shows).
 * @param {number} id @param {number} words
 */
export function answerText(id, words) {
  return Array.from({ length: words }, (_, i) => `r${id}w${i}`).join(" ");
}

/** @param {string | undefined} s */
function parseJson(s) {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** @param {Observed} o @param {Partial<Verdict> & { outcome: Outcome, kind: string }} v @returns {Verdict} */
function verdict(o, v) {
  return { id: o.id, client: o.client, stream: o.stream, chars: 0, sentAt: o.sentAt, endAt: o.endAt, headersAt: o.headersAt, status: o.status, headers: o.headers, segments: [], ...v };
}

/**
 * Where each piece of an answer came from: the first server (the one `resumes[0]` left, else the
 * one that finished, else the header's), then each continuation's, each with the arrival of its
 * first text (`textAt(chars)`: the first text past that many characters).
 * @param {any} ext @param {string} headerTarget @param {(afterChars: number) => number | undefined} textAt
 * @returns {Segment[]}
 */
function segmentsOf(ext, headerTarget, textAt) {
  const resumes = /** @type {Array<{ from: string, to: string, after_chars: number }>} */ (ext?.resumes ?? []);
  const first = resumes[0]?.from ?? ext?.target ?? headerTarget;
  /** @type {Segment[]} */
  const out = [];
  const at0 = textAt(-1);
  if (first && at0 !== undefined) out.push({ target: first, at: at0 });
  for (const r of resumes) {
    const at = textAt(r.after_chars);
    if (at !== undefined) out.push({ target: r.to, at });
  }
  return out;
}

/** @param {Observed} o @returns {Verdict} */
export function judgeStream(o) {
  if (o.status === undefined) return verdict(o, { outcome: "wrong", kind: `no response (${o.failure ?? "?"})`, failedAt: o.endAt });
  if (o.status !== 200) {
    const err = parseJson(o.body)?.error;
    if (!err?.code) return verdict(o, { outcome: "wrong", kind: `HTTP ${o.status} without an error envelope`, failedAt: o.endAt });
    return verdict(o, { outcome: "error", kind: `HTTP ${o.status} ${err.code}`, phase: "before headers", message: err.message, failedAt: o.headersAt });
  }
  /** @type {Set<string>} */
  const ids = new Set();
  /** @type {string[]} */
  const finishes = [];
  /** @type {Array<{ at: number, chars: number }>} */
  const texts = [];
  let text = "";
  let done = 0;
  let afterDone = 0;
  let afterError = 0;
  let unparsed = 0;
  /** @type {{ code: string, message: string, at: number, chars: number } | undefined} */
  let error;
  /** @type {any} */
  let ext;
  for (const f of o.frames ?? []) {
    if (done) afterDone++;
    if (f.data === "[DONE]") {
      done++;
      continue;
    }
    if (error) afterError++;
    const j = parseJson(f.data);
    if (!j) {
      unparsed++;
      continue;
    }
    if (j.error) {
      error ??= { code: String(j.error.code), message: String(j.error.message ?? ""), at: f.at, chars: text.length };
      continue;
    }
    ids.add(j.id);
    const choice = j.choices?.[0];
    const d = choice?.delta?.content;
    if (typeof d === "string" && d) {
      text += d;
      texts.push({ at: f.at, chars: text.length });
    }
    if (choice?.finish_reason) finishes.push(choice.finish_reason);
    if (j.x_switchyard) ext = j.x_switchyard;
  }
  const textAt = (/** @type {number} */ after) => texts.find((t) => t.chars > after)?.at;
  const common = { chars: text.length, firstTextAt: texts[0]?.at, ext, segments: segmentsOf(ext, o.headers?.target ?? "", textAt) };
  /** @type {string[]} */
  const wrong = [];
  if (unparsed) wrong.push(`${unparsed} frame(s) not JSON`);
  if (ids.size > 1) wrong.push(`${ids.size} ids`);
  if (afterDone) wrong.push(`${afterDone} frame(s) after [DONE]`);
  if (error) {
    if (!o.expected.startsWith(text)) wrong.push(`text before the error frame is not a prefix of the answer (${JSON.stringify(text.slice(0, 80))})`);
    if (afterError) wrong.push(`${afterError} frame(s) after the error frame`);
    if (done) wrong.push("[DONE] with an error frame");
    if (wrong.length) return verdict(o, { ...common, outcome: "wrong", kind: wrong.join("; "), failedAt: error.at });
    const phase = error.chars ? `after first token (${error.chars} of ${o.expected.length} chars)` : "after headers, before first token";
    return verdict(o, { ...common, outcome: "error", kind: `frame ${error.code}`, phase, message: error.message, failedAt: error.at });
  }
  if (o.failure) wrong.push(`stream broke after ${text.length} chars without an error frame (${o.failure})`);
  if (text !== o.expected) wrong.push(o.expected.startsWith(text) ? `truncated: ${text.length} of ${o.expected.length} chars` : `text differs: ${JSON.stringify(text.slice(0, 80))}`);
  if (finishes.length !== 1) wrong.push(`${finishes.length} finish_reason frames`);
  else if (finishes[0] !== "stop") wrong.push(`finish_reason ${finishes[0]}`);
  if (done !== 1) wrong.push(`${done} [DONE]`);
  if (ids.size === 1 && ![...ids][0]?.startsWith?.("chatcmpl-")) wrong.push(`id ${[...ids][0]}`);
  if (wrong.length) return verdict(o, { ...common, outcome: "wrong", kind: wrong.join("; "), failedAt: o.endAt });
  return verdict(o, { ...common, outcome: ext?.resumes?.length ? "continued" : "exact", kind: "" });
}

/** @param {Observed} o @returns {Verdict} */
export function judgeJson(o) {
  if (o.status === undefined) return verdict(o, { outcome: "wrong", kind: `no response (${o.failure ?? "?"})`, failedAt: o.endAt });
  if (o.failure) return verdict(o, { outcome: "wrong", kind: `body broken after HTTP ${o.status} (${o.failure})`, failedAt: o.endAt });
  const body = parseJson(o.body);
  if (body?.error?.code) {
    const committed = o.status === 200;
    return verdict(o, {
      outcome: "error",
      kind: committed ? `body ${body.error.code}` : `HTTP ${o.status} ${body.error.code}`,
      phase: committed ? "after commit (a 200 whose body is the error)" : "before commit",
      message: body.error.message,
      failedAt: committed ? o.endAt : o.headersAt,
    });
  }
  if (o.status !== 200) return verdict(o, { outcome: "wrong", kind: `HTTP ${o.status} without an error envelope`, failedAt: o.endAt });
  if (!body) return verdict(o, { outcome: "wrong", kind: `body not JSON (${o.body?.length ?? 0} bytes)`, failedAt: o.endAt });
  const ext = body.x_switchyard;
  const content = body.choices?.[0]?.message?.content;
  // The first text's arrival, from Switchyard's own timings (the body comes at the end); continuations' only as the end.
  const firstAt = ext?.timings ? o.endAt - (ext.timings.total_ms - ext.timings.first_event_ms) : o.endAt;
  const segments = segmentsOf(ext, o.headers?.target ?? "", (after) => (after < 0 ? firstAt : o.endAt)).map((s, i) => (i > 0 || !ext?.timings ? { ...s, approx: /** @type {const} */ (true) } : s));
  const common = { chars: typeof content === "string" ? content.length : 0, ...(ext?.timings ? { firstTextAt: firstAt } : {}), ext, segments };
  /** @type {string[]} */
  const wrong = [];
  if (content !== o.expected) wrong.push(typeof content === "string" && o.expected.startsWith(content) ? `truncated: ${content.length} of ${o.expected.length} chars` : `text differs: ${JSON.stringify(String(content).slice(0, 80))}`);
  if (body.choices?.[0]?.finish_reason !== "stop") wrong.push(`finish_reason ${body.choices?.[0]?.finish_reason}`);
  if (!String(body.id).startsWith("chatcmpl-")) wrong.push(`id ${body.id}`);
  if (wrong.length) return verdict(o, { ...common, outcome: "wrong", kind: wrong.join("; "), failedAt: o.endAt });
  return verdict(o, { ...common, outcome: ext?.resumes?.length ? "continued" : "exact", kind: "" });
}

/** @param {Observed} o */
export const judge = (o) => (o.stream ? judgeStream(o) : judgeJson(o));

/** @param {number[]} xs @param {number} p 0–100 */
export function percentile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * A server's life during the run, as the chaos loop recorded it.
 * @typedef {{ at: number, target: string, kind: "kill" | "exit" | "spawn" | "ready" | "spawn-failed" | "crash", note?: string }} ServerEvent
 * One death and return: when it was killed, when the new process was spawned and answered /health
 * 200, and when Switchyard first routed an answer to it (its first text reaching a client).
 * `killedAgainAt`: its next death, when that came before it served.
 * @typedef {{ target: string, killAt: number, spawnAt?: number, readyAt?: number, servedAt?: number, rejoinMs?: number, killedAgainAt?: number }} Restart
 */

/**
 * Each restart's rejoin: the first segment on its server at or after its spawn (and before its next
 * death), less its readiness.
 * @param {Restart[]} restarts @param {Verdict[]} verdicts @returns {Restart[]}
 */
export function rejoins(restarts, verdicts) {
  const segments = verdicts.flatMap((v) => v.segments);
  return restarts.map((r) => {
    if (r.readyAt === undefined || r.spawnAt === undefined) return r;
    const nextKill = Math.min(...restarts.filter((x) => x.target === r.target && x.killAt > r.killAt).map((x) => x.killAt), Infinity);
    const served = segments.filter((s) => s.target === r.target && s.at >= /** @type {number} */ (r.spawnAt) && s.at < nextKill).map((s) => s.at);
    if (!served.length) return nextKill < Infinity ? { ...r, killedAgainAt: nextKill } : r;
    const servedAt = Math.min(...served);
    return { ...r, servedAt, rejoinMs: servedAt - r.readyAt };
  });
}

/**
 * What a server was doing at `t`: up (ready), dead (killed, not spawned yet), loading (spawned, not
 * ready). Servers are up from the start.
 * @param {ServerEvent[]} timeline @param {string} target @param {number} t
 */
export function stateAt(timeline, target, t) {
  let state = "up";
  let since = -Infinity;
  for (const e of timeline) {
    if (e.target !== target || e.at > t) continue;
    if (e.kind === "kill" || e.kind === "crash") [state, since] = ["dead", e.at];
    else if (e.kind === "spawn") [state, since] = ["loading", e.at];
    else if (e.kind === "ready") [state, since] = ["up", e.at];
  }
  return { state, since };
}

/**
 * The deaths an answer met: kills, while it was in flight, of a server it went to (or, when Switchyard
 * did not say where it went, of any server), each with where the answer stood.
 * @param {Verdict} v @param {ServerEvent[]} timeline
 */
export function deathsMet(v, timeline) {
  const named = servers(v);
  const kills = timeline.filter((e) => e.kind === "kill" && e.at >= v.sentAt && e.at <= (v.failedAt ?? v.endAt));
  return kills
    .filter((k) => !named.length || named.includes(k.target))
    .map((k) => {
      const firstText = v.firstTextAt;
      const continuation = v.segments.slice(1).find((s) => s.target === k.target);
      // A non-stream error has no text to date its start by (its headers are the commit's).
      const phase = !named.length
        ? "server unknown"
        : continuation
          ? "during a continuation"
          : !v.stream && firstText === undefined && v.outcome === "error"
            ? "non-stream, before its body failed"
            : v.headersAt === undefined || k.at < v.headersAt
              ? "before headers"
              : firstText === undefined || k.at < firstText
                ? "before the first token"
                : "mid-answer";
      return { target: k.target, at: k.at, phase };
    });
}

/** The servers Switchyard said an answer went to (headers, outcomes, x_switchyard, the error's message). @param {Verdict} v */
export function servers(v) {
  const names = new Set(v.segments.map((s) => s.target));
  for (const m of (v.message ?? "").matchAll(/\bllama:[\w.-]+:\d+/g)) names.add(m[0]);
  if (v.headers?.target) names.add(v.headers.target);
  for (const part of (v.headers?.outcomes ?? "").split(";")) {
    const name = decodeURIComponent(part.trim().split("=")[0] ?? "");
    if (name) names.add(name);
  }
  if (v.ext?.target) names.add(v.ext.target);
  return [...names];
}

/**
 * A run's figures. `restarts` with their rejoins (rejoins()); `probes`, the prober's answers, are
 * counted apart.
 * @param {Verdict[]} verdicts @param {Restart[]} restarts @param {ServerEvent[]} timeline @param {Verdict[]} [probes]
 */
export function summarize(verdicts, restarts, timeline, probes = []) {
  const count = (/** @type {Outcome} */ o) => verdicts.filter((v) => v.outcome === o).length;
  const lat = (/** @type {Verdict[]} */ vs) => {
    const xs = vs.map((v) => v.endAt - v.sentAt);
    return { n: xs.length, p50: percentile(xs, 50), p99: percentile(xs, 99) };
  };
  /** @type {Record<string, number>} */
  const errorKinds = {};
  for (const v of verdicts.filter((x) => x.outcome === "error")) {
    const k = `${v.stream ? "stream" : "non-stream"}: ${v.kind}, ${v.phase}`.replace(/ \(\d+ of \d+ chars\)/, "");
    errorKinds[k] = (errorKinds[k] ?? 0) + 1;
  }
  /** @type {Record<string, Record<string, number>>} */
  const byDeathPhase = {};
  for (const v of verdicts) {
    for (const d of deathsMet(v, timeline)) {
      const row = (byDeathPhase[d.phase] ??= {});
      row[v.outcome] = (row[v.outcome] ?? 0) + 1;
    }
  }
  const resumes = verdicts.flatMap((v) => /** @type {Array<{ code: string }>} */ (v.ext?.resumes ?? []));
  const exact = count("exact") + count("continued");
  return {
    answers: verdicts.length,
    stream: verdicts.filter((v) => v.stream).length,
    exact,
    exactPct: verdicts.length ? (100 * exact) / verdicts.length : NaN,
    continued: count("continued"),
    resumes: resumes.length,
    multiResumes: verdicts.filter((v) => (v.ext?.resumes?.length ?? 0) > 1).length,
    failedOver: verdicts.filter((v) => (v.outcome === "exact" || v.outcome === "continued") && Number(v.ext?.attempts ?? 1) - (v.ext?.resumes?.length ?? 0) > 1).length,
    errors: count("error"),
    errorKinds,
    wrong: count("wrong"),
    latency: {
      all: lat(verdicts),
      exact: lat(verdicts.filter((v) => v.outcome === "exact")),
      continued: lat(verdicts.filter((v) => v.outcome === "continued")),
      error: lat(verdicts.filter((v) => v.outcome === "error")),
    },
    deaths: restarts.length,
    rejoins: restarts,
    probes: { sent: probes.length, exact: probes.filter((v) => v.outcome === "exact" || v.outcome === "continued").length, errors: probes.filter((v) => v.outcome === "error").length, wrong: probes.filter((v) => v.outcome === "wrong").length },
    byDeathPhase,
  };
}

/** @typedef {ReturnType<typeof summarize>} Summary */

const s1 = (/** @type {number} */ ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "–");
const s2 = (/** @type {number} */ ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : "–");

/** Lines describing a run's figures. @param {Summary} s @param {string} label */
export function formatSummary(s, label) {
  const out = [
    `${label}: ${s.answers} answers (${s.stream} stream), ${s.exact} exact (${s.exactPct.toFixed(1)} %) of which ${s.continued} continued (${s.resumes} continuations, ${s.multiResumes} answers continued more than once), ${s.failedOver} failed over before the first token; ${s.errors} clean errors; ${s.wrong} WRONG`,
    `  latency p50/p99: all ${s1(s.latency.all.p50)}/${s1(s.latency.all.p99)}, exact ${s1(s.latency.exact.p50)}/${s1(s.latency.exact.p99)}, continued ${s1(s.latency.continued.p50)}/${s1(s.latency.continued.p99)}, errors ${s1(s.latency.error.p50)}/${s1(s.latency.error.p99)}`,
  ];
  for (const [k, n] of Object.entries(s.errorKinds)) out.push(`  error ${n} × ${k}`);
  if (s.deaths) {
    const r = s.rejoins;
    const ms = r.filter((x) => x.rejoinMs !== undefined).map((x) => /** @type {number} */ (x.rejoinMs));
    const cut = r.filter((x) => x.rejoinMs === undefined && x.killedAgainAt !== undefined).length;
    out.push(`  ${s.deaths} deaths; rejoin (ready → first answer through Switchyard) p50 ${s2(percentile(ms, 50))}, max ${s2(Math.max(...ms))}; ${r.length - ms.length - cut} never served again, ${cut} killed again before serving; ${s.probes.sent} probes (${s.probes.exact} exact, ${s.probes.errors} errors, ${s.probes.wrong} wrong)`);
    for (const [phase, row] of Object.entries(s.byDeathPhase)) out.push(`  deaths met ${phase}: ${Object.entries(row).map(([o, n]) => `${n} ${o}`).join(", ")}`);
  }
  return out;
}

/**
 * One line per restart (with its rejoin, from rejoins()) and, for every answer that was not exact
 * (probes' included), what the client saw, where it went, and what those servers were doing then.
 * @param {Verdict[]} verdicts @param {Restart[]} restarts @param {ServerEvent[]} timeline
 */
export function formatDetails(verdicts, restarts, timeline) {
  const t = (/** @type {number} */ ms) => `${(ms / 1000).toFixed(2)}s`;
  const out = [];
  for (const r of restarts) {
    out.push(`  ${r.target}: killed ${t(r.killAt)}, spawned ${r.spawnAt === undefined ? "–" : t(r.spawnAt)}, ready ${r.readyAt === undefined ? "–" : t(r.readyAt)}, first answer ${r.servedAt !== undefined ? `${t(r.servedAt)} (rejoin ${r.rejoinMs?.toFixed(0)} ms)` : r.killedAgainAt !== undefined ? `none before it was killed again at ${t(r.killedAgainAt)}` : "none"}`);
  }
  for (const v of verdicts.filter((x) => x.outcome === "error" || x.outcome === "wrong")) {
    const at = v.failedAt ?? v.endAt;
    const where = servers(v).map((name) => {
      const a = stateAt(timeline, name, v.sentAt);
      const b = stateAt(timeline, name, at);
      return `${name} ${a.state}${Number.isFinite(a.since) ? ` since ${t(a.since)}` : ""} at send → ${b.state}${Number.isFinite(b.since) ? ` since ${t(b.since)}` : ""} at failure`;
    });
    const met = deathsMet(v, timeline).map((d) => `${d.target} killed ${t(d.at)} (${d.phase})`);
    const others = [...new Set(timeline.map((e) => e.target))].map((name) => `${name.replace(/^llama:127\.0\.0\.1:/, ":")} ${stateAt(timeline, name, at).state}`);
    out.push(
      `  ${v.client < 0 ? "probe " : ""}#${v.id} ${v.stream ? "stream" : "non-stream"} ${v.outcome.toUpperCase()} ${v.kind}${v.phase ? `, ${v.phase}` : ""}; sent ${t(v.sentAt)}, failed ${t(at)} after ${v.chars} chars; attempts ${v.headers?.attempts || "–"}, x-switchyard-target ${v.headers?.target || "–"}, outcomes ${v.headers?.outcomes || "–"}${v.ext?.resumes ? `, resumes ${JSON.stringify(v.ext.resumes)}` : ""}`,
      `      message: ${(v.message ?? "").slice(0, 240)}`,
      `      servers: ${where.join("; ") || "none named"}; deaths met: ${met.join(", ") || "none"}; pool at failure: ${others.join(", ")}`,
    );
  }
  return out;
}
