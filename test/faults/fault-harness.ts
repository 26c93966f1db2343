import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { createApp } from "../../src/app.ts";
import { parseSse } from "../workerd/harness.ts";

export const FIXTURE_URL = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
export const LLAMA_URL = env.LLAMA_URL as string;

let n = 0;
/** A fixture URL of its own (one health record and one circuit per test): `/u-<tag>/<path>`. */
export const fixture = (path: string) => `${FIXTURE_URL}/u-${Date.now().toString(36)}${++n}/${path}`;

/** Short timeouts so every fault resolves in well under a second or two. */
export const FAST = { responseStartMs: 300, firstTokenMs: 300, idleMs: 300, totalMs: 1500, commitMs: 1000, heartbeatMs: 100 };

export function vars(targets: unknown[], extra: Record<string, unknown> = {}) {
  return { SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets } }, timeouts: FAST, ...extra }) };
}

export const llama = (url: string, more: Record<string, unknown> = {}) => ({ kind: "llama", url, ...more });

/** Sends a chat request to the Worker inside workerd; `signal` stands for the client's connection. */
export async function chat(opts: { stream: boolean; vars: Record<string, unknown>; requestId?: string; signal?: AbortSignal; body?: Record<string, unknown> }) {
  const ctx = createExecutionContext();
  const headers = new Headers({ "content-type": "application/json" });
  if (opts.requestId) headers.set("x-request-id", opts.requestId);
  const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: opts.stream, ...opts.body });
  const started = Date.now();
  const req = new Request("http://switchyard.test/v1/chat/completions", { method: "POST", headers, body, ...(opts.signal ? { signal: opts.signal } : {}) });
  const res = await createApp().fetch(req, { ...env, ...opts.vars }, ctx);
  return { res, started };
}

export interface Outcome {
  status: number;
  /** Error code: of the envelope (before commit or in a committed non-stream body) or of the error frame. */
  code: string | null;
  text: string;
  done: boolean;
  finish: string[];
  attempts: string | null;
  raw: string;
  /** Milliseconds from the request until the client had the whole answer. */
  elapsed: number;
}

/** Reads an answer to the end, stream or not, into what the client saw. */
export async function outcome(res: Response, started: number): Promise<Outcome> {
  const raw = await res.text();
  const elapsed = Date.now() - started;
  const attempts = res.headers.get("x-switchyard-attempts");
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    const { frames, done } = parseSse(raw);
    const err = frames.find((f) => f.error);
    return {
      status: res.status,
      code: err?.error.code ?? null,
      text: frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join(""),
      done,
      finish: frames.map((f) => f.choices?.[0]?.finish_reason).filter(Boolean),
      attempts,
      raw,
      elapsed,
    };
  }
  const body = JSON.parse(raw);
  return {
    status: res.status,
    code: body.error?.code ?? null,
    text: body.choices?.[0]?.message?.content ?? "",
    done: false,
    finish: body.choices ? [body.choices[0].finish_reason] : [],
    attempts,
    raw,
    elapsed,
  };
}

/** Longest wait past a configured timeout seen in this run (printed at the end of the suite). */
export const overruns: Array<{ fault: string; timeoutMs: number; elapsedMs: number; overMs: number }> = [];

export function recordOverrun(fault: string, timeoutMs: number, elapsedMs: number) {
  overruns.push({ fault, timeoutMs, elapsedMs, overMs: elapsedMs - timeoutMs });
}

export async function fixtureLog<T = any>(what: "_requests" | "_closed"): Promise<T[]> {
  return (await fetch(`${FIXTURE_URL}/${what}`)).json();
}

/** Resolves once the fixture has received the request `requestId` (false if it never came within `withinMs`). */
export async function arrived(requestId: string, withinMs = 5000): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    const sent = await fixtureLog<{ headers: Record<string, string> }>("_requests");
    // The client's own id reaches the upstream as x-client-request-id (x-request-id is Switchyard's).
    if (sent.some((r) => r.headers["x-client-request-id"] === requestId)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** When the fixture saw the connection for `requestId` close (ms after `since`), or Infinity. */
export async function closedAfter(requestId: string, since: number, withinMs = 1500): Promise<number> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    const hit = (await fixtureLog<{ requestId: string; at: number }>("_closed")).find((c) => c.requestId === requestId);
    if (hit) return hit.at - since;
    await new Promise((r) => setTimeout(r, 25));
  }
  return Infinity;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
