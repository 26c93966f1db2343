// The operator's status page (public/status.html): polls /v1/admin/status with the admin token and
// draws upstream health, browser sessions and a live traffic chart, and /v1/admin/requests for the
// recent requests (failed ones marked, filtered by key and model, each opening to its detail).
// Built into public/status.js by worker/build.mjs. The token comes from the form, or from the link `npm start` prints
// (/status.html#admin=<token>: a fragment never reaches the server), which then leaves the address bar.

import type { StatusBody } from "../src/health/status-body.ts";
import type { BatchProgress } from "../src/batch/batch-progress.ts";

type Status = StatusBody & { batches?: BatchProgress[] };
import type { DetailedRecord, RequestRecord } from "../src/observability/request-record.ts";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const points: Array<{ at: number; rate: number; errors: number }> = [];
let last: { at: number; requests: number; errors: number } | null = null;
let timer: ReturnType<typeof setInterval> | undefined;

function cell(text: string, cls = ""): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function fill(id: string, rows: HTMLTableCellElement[][], empty: string): void {
  const body = $<HTMLTableElement>(id).tBodies[0]!;
  body.replaceChildren(
    ...(rows.length ? rows : [[cell(empty, "muted")]]).map((cells) => {
      const tr = document.createElement("tr");
      tr.append(...cells);
      return tr;
    }),
  );
}

function draw(): void {
  const canvas = $<HTMLCanvasElement>("chart");
  const g = canvas.getContext("2d")!;
  g.clearRect(0, 0, canvas.width, canvas.height);
  const max = Math.max(1, ...points.map((p) => p.rate));
  const x = (i: number) => (i / Math.max(1, points.length - 1)) * (canvas.width - 40) + 30;
  const y = (v: number) => canvas.height - 10 - (v / max) * (canvas.height - 30);
  g.fillStyle = "#6b7280";
  g.fillText(`${max.toFixed(1)}/s`, 2, 14);
  g.fillText("0", 2, canvas.height - 10);
  for (const [key, color] of [["rate", "#1a73e8"], ["errors", "#b3261e"]] as const) {
    g.strokeStyle = color;
    g.beginPath();
    points.forEach((p, i) => (i ? g.lineTo(x(i), y(p[key])) : g.moveTo(x(i), y(p[key]))));
    g.stroke();
  }
}

/** A duration as the page says it: seconds, minutes or hours. */
function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
}

async function poll(token: string): Promise<void> {
  const res = await fetch("/v1/admin/status", { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    $("error").textContent = body?.error?.message ?? `HTTP ${res.status}`;
    return;
  }
  $("error").textContent = "";
  const s = (await res.json()) as Status;
  const requests = s.targets.reduce((a, t) => a + t.requests, 0);
  const errors = s.targets.reduce((a, t) => a + t.errors, 0);
  if (last && s.at > last.at) {
    const secs = (s.at - last.at) / 1000;
    points.push({ at: s.at, rate: Math.max(0, requests - last.requests) / secs, errors: Math.max(0, errors - last.errors) / secs });
    while (points.length > 150) points.shift();
  }
  last = { at: s.at, requests, errors };
  draw();
  const stateClass = (v: string) => (v === "ready" || v === "closed" ? "ok" : v === "loading" || v === "half-open" || v === "unknown" ? "warn" : "bad");
  fill(
    "upstreams",
    s.upstreams.map((u) => [
      cell(u.configured ? u.url : `${u.url} (not configured)`, u.configured ? "" : "gone"),
      cell(u.health.state, stateClass(u.health.state)),
      cell(u.circuit, stateClass(u.circuit)),
      cell(u.health.slotsTotal !== undefined ? `${u.health.slotsBusy ?? 0} / ${u.health.slotsTotal}` : "—"),
      cell(u.health.checkedAt ? `${Math.round((s.at - u.health.checkedAt) / 1000)} s ago` : "not yet"),
    ]),
    "No llama-server has had traffic yet.",
  );
  fill(
    "targets",
    s.targets.map((t) => [
      cell(t.configured ? t.target : `${t.target} (not configured${t.lastAt === null ? "" : `, last ${ago(s.at - t.lastAt)} ago`})`, t.configured ? "" : "gone"),
      cell(String(t.requests)),
      cell(String(t.errors), t.errors ? "bad" : ""),
      cell(`${t.promptTokens} / ${t.completionTokens}`),
      cell(t.meanFirstEventMs === null ? "—" : `${t.meanFirstEventMs} ms`),
      cell(t.meanRequestMs === null ? "—" : `${t.meanRequestMs} ms`),
    ]),
    "No requests yet.",
  );
  fill(
    "sessions",
    s.sessions.map((x) => [cell(x.sessionId), cell(x.models.join(", ")), cell(String(x.running)), cell(String(x.queued))]),
    "No browser session is connected.",
  );
  fill(
    "batches",
    (s.batches ?? []).map((b) => [
      cell(b.id),
      cell(b.key ?? "—"),
      cell(b.endpoint),
      cell(b.model ?? "—"),
      cell(b.status, b.status === "in_progress" ? "ok" : "warn"),
      cell(`${b.request_counts.completed} / ${b.request_counts.failed} / ${b.request_counts.total}`),
      cell(b.expires_at === null ? "—" : `in ${ago(Math.max(0, b.expires_at * 1000 - s.at))}`),
    ]),
    "No batch is running.",
  );
}

/** The request log (GET /v1/admin/requests) with the form's filters: the newest 50, failed ones marked. */
async function pollRequests(token: string): Promise<void> {
  const q = new URLSearchParams({ limit: "50" });
  const key = $<HTMLInputElement>("filter-key").value.trim();
  const model = $<HTMLInputElement>("filter-model").value.trim();
  if (key) q.set("key", key);
  if (model) q.set("model", model);
  if ($<HTMLInputElement>("filter-errors").checked) q.set("status", "error");
  const res = await fetch(`/v1/admin/requests?${q}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    fill("requests", [], body?.error?.code === "request_log_off" ? "The request log is off (observability.log)." : (body?.error?.message ?? `HTTP ${res.status}`));
    return;
  }
  const { data } = (await res.json()) as { data: RequestRecord[] };
  const failed = data.filter((r) => r.error !== null || r.status >= 400).length;
  $("request-errors").textContent = failed ? `${failed} failed` : "";
  const ms = (v: number | null) => (v === null ? "—" : `${v} ms`);
  const body = $<HTMLTableElement>("requests").tBodies[0]!;
  if (!data.length) return fill("requests", [], "No requests logged yet.");
  body.replaceChildren(
    ...data.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.id = r.id;
      if (r.error !== null || r.status >= 400) tr.className = "failed";
      if (r.id === selected) tr.classList.add("selected");
      tr.append(
        cell(new Date(r.time).toLocaleTimeString()),
        cell(r.key ?? "—"),
        cell(r.endpoint.replace(/^\/v1\//, "")),
        cell(r.model ?? "—"),
        cell(String(r.status), r.status >= 400 ? "bad" : ""),
        cell(r.error ?? "", "bad"),
        cell(r.target ?? "—"),
        cell(r.attempts === null ? "—" : String(r.attempts)),
        cell(r.prompt_tokens === null && r.completion_tokens === null ? "—" : `${r.prompt_tokens ?? "—"} / ${r.completion_tokens ?? "—"}`),
        cell(ms(r.ttft_ms)),
        cell(ms(r.duration_ms)),
      );
      tr.addEventListener("click", () => void showRequest(token, r.id));
      return tr;
    }),
  );
}

let selected: string | null = null;

/** One request's detail under the table: its attempts, outcomes, timings (and its capture, when on). */
async function showRequest(token: string, id: string): Promise<void> {
  selected = id;
  for (const tr of $<HTMLTableElement>("requests").tBodies[0]!.rows) tr.classList.toggle("selected", tr.dataset.id === id);
  const res = await fetch(`/v1/admin/requests/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${token}` } });
  const detail = $("request-detail");
  if (!res.ok) {
    detail.textContent = `${id}: HTTP ${res.status}`;
    return;
  }
  const r = (await res.json()) as DetailedRecord & { capture?: { request: string; response: string; truncated: boolean } };
  const lines = [
    `${r.id}  ${r.time}  ${r.endpoint}  ${r.model ?? ""}${r.stream ? " (stream)" : ""}`,
    `status ${r.status}${r.error ? `, error ${r.error}` : ""}; key ${r.key_name ?? r.key ?? "none"}`,
    `target ${r.target ?? "none"} after ${r.attempts ?? 0} attempt(s)`,
    ...r.outcomes.map((o) => `  ${o.target}: ${o.code}`),
    ...r.resumes.map((x) => `  continued: ${x.from} → ${x.to} (${x.code})`),
    `first token ${r.ttft_ms ?? "—"} ms, total ${r.duration_ms ?? "—"} ms${r.timings ? `; answering attempt: first event ${r.timings.first_event_ms ?? "—"} ms, total ${r.timings.total_ms ?? "—"} ms` : ""}`,
    `finish ${r.finish_reasons.join(", ") || "—"}; tokens ${r.prompt_tokens ?? "—"} in, ${r.completion_tokens ?? "—"} out`,
  ];
  if (r.capture) lines.push("", `request${r.capture.truncated ? " (truncated)" : ""}:`, r.capture.request, "", "answer:", r.capture.response);
  detail.textContent = lines.join("\n");
}

function start(token: string): void {
  sessionStorage.setItem("switchyard-admin-token", token);
  if (timer) clearInterval(timer);
  const both = () => {
    void poll(token);
    void pollRequests(token);
  };
  both();
  timer = setInterval(both, 2000);
  $<HTMLFormElement>("request-filters").oninput = () => void pollRequests(token);
  $<HTMLFormElement>("request-filters").onsubmit = (e) => e.preventDefault();
}

$<HTMLFormElement>("login").addEventListener("submit", (e) => {
  e.preventDefault();
  start($<HTMLInputElement>("token").value.trim());
});
/** The token of a `#admin=<token>` link, taken out of the address bar (and its history entry). */
function tokenFromLink(): string | null {
  const m = /(?:^|[#&])admin=([^&]+)/.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, "", location.pathname + location.search);
  return decodeURIComponent(m[1]!);
}

const saved = tokenFromLink() ?? sessionStorage.getItem("switchyard-admin-token");
if (saved) start(saved);
