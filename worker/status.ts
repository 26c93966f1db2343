// The operator's status page (public/status.html): polls /v1/admin/status with the admin token and
// draws upstream health, browser sessions and a live traffic chart. Built into public/status.js by
// worker/build.mjs. The token comes from the form, or from the link `npm start` prints
// (/status.html#admin=<token>: a fragment never reaches the server), which then leaves the address bar.

import type { StatusBody as Status } from "../src/health/status-body.ts";

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
      cell(u.url),
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
      cell(t.target),
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
}

function start(token: string): void {
  sessionStorage.setItem("switchyard-admin-token", token);
  if (timer) clearInterval(timer);
  void poll(token);
  timer = setInterval(() => void poll(token), 2000);
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
