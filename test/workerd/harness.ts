import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../../src/app.ts";
import { sendHealthNow } from "../../src/health/health-client.ts";
import { flush, requestLogName } from "../../src/observability/request-outbox.ts";

export const LLAMA_URL = env.LLAMA_URL as string;
export const FIXTURE_URL = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;
/** A real llama-server with gpt-oss's harmony template (test/support/global-setup.ts). */
export const HARMONY_URL = (env as unknown as { HARMONY_URL: string }).HARMONY_URL;

/** The literal-grammar trick: even a random-weight model then emits exactly `text`. */
export const grammar = (text: string) => `root ::= ${JSON.stringify(text)}`;

/**
 * Calls the Worker's app inside workerd with extra variables (e.g. a SWITCHYARD_CONFIG). `done()`
 * waits for everything the request left running (ctx.waitUntil), its request-log batch handled and
 * its health report sent at once rather than at the end of their second (the admin list handles the
 * log's batch the same way), so that a test of many requests in a row does not wait a second for each.
 */
export async function call(path: string, init: RequestInit & { json?: unknown } = {}, vars: Record<string, unknown> = {}) {
  const ctx = createExecutionContext();
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  const allEnv = { ...env, ...vars };
  // What the request defers is seen as well as kept (ctx.waitUntil), to be waited for below.
  const deferred: Array<Promise<unknown>> = [];
  const keep = ctx.waitUntil.bind(ctx);
  const defer = (p: Promise<unknown>) => {
    deferred.push(p);
    keep(p);
  };
  ctx.waitUntil = defer;
  const res = await createApp().fetch(new Request(`http://switchyard.test${path}`, { method: init.json !== undefined ? "POST" : init.method, ...init, headers, body }), allEnv, ctx);
  const done = async () => {
    // A request may queue its log entry only after some deferred work (reading an error body):
    // handle the batch and send the health outbox, wait for what was deferred, and again while
    // that deferred more.
    for (let known = -1; known !== deferred.length; ) {
      known = deferred.length;
      sendHealthNow();
      await flush(requestLogName(allEnv as Env), defer);
      await Promise.allSettled(deferred);
    }
    await waitOnExecutionContext(ctx);
  };
  return { res, done };
}

export function configWith(models: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { SWITCHYARD_CONFIG: JSON.stringify({ models, ...extra }) };
}

/** A model "m" served by one fixture replay (or behaviour) of the fixture upstream. */
export function fixtureModel(path: string, extra: Record<string, unknown> = {}) {
  return configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/${path}` }] } }, extra);
}

export interface SseResult {
  frames: Array<Record<string, any>>;
  done: boolean;
  comments: number;
  raw: string;
}

export async function readSse(res: Response): Promise<SseResult> {
  return parseSse(await res.text());
}

/** SSE text as a client sees it: the data frames (parsed; a named frame's data), whether [DONE] came, comment count. */
export function parseSse(raw: string): SseResult {
  const frames: Array<Record<string, any>> = [];
  let done = false;
  let comments = 0;
  for (const block of raw.split("\n\n")) {
    if (!block) continue;
    if (block.startsWith(":")) {
      comments++;
      continue;
    }
    // A named frame (Responses, Messages) is `event: <type>` then `data: <event>`: the data line is the frame.
    const named = block.startsWith("event: ") ? block.slice(block.indexOf("\n") + 1) : block;
    const data = named.replace(/^data: /, "");
    if (data === "[DONE]") done = true;
    else frames.push(JSON.parse(data));
  }
  return { frames, done, comments, raw };
}

export const text = (frames: Array<Record<string, any>>) => frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");

export async function received(): Promise<Array<{ path: string; headers: Record<string, string>; body: string; at: number }>> {
  return (await fetch(`${FIXTURE_URL}/_requests`)).json();
}

/** Variables for a keyed deployment of its own: a fresh key store (KEY_STORE_NAME) and an ADMIN_TOKEN. */
export function keyedVars(extra: Record<string, unknown> = {}) {
  return { KEY_STORE_NAME: `t-${crypto.randomUUID()}`, ADMIN_TOKEN: `adm-${crypto.randomUUID()}`, ...extra } as Record<string, unknown> & { ADMIN_TOKEN: string };
}

/** Creates a team key through the admin API; returns `{id, key, name, scopes, …}`. */
export async function createKey(vars: Record<string, unknown>, body: Record<string, unknown>): Promise<{ id: string; key: string; name: string; scopes: string[] }> {
  const { res, done } = await call("/v1/admin/keys", { json: body, headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars);
  await done();
  if (res.status !== 201) throw new Error(`createKey: ${res.status} ${await res.text()}`);
  return res.json();
}
