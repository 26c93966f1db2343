// Where Switchyard's own cost on a non-stream request goes: handlers that each add one layer of what
// the Worker does, from a bare pass-through to the whole app, bundled into one Worker with the app (so
// they share one isolate) by bench/overhead/decompose.mjs. `/layer/<name>/…` picks a handler; any
// other path is the app itself. Every handler answers the fast upstream's non-stream request.
import { Hono, type Context } from "hono";
import type { AppEnv } from "../../src/auth/app-env.ts";
import app from "../../src/index.ts";
import type { ConfigEnv } from "../../src/config/config.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { readJsonBody } from "../../src/http/read-json-body.ts";
import { Deadlines } from "../../src/lib/deadlines.ts";
import { EventReader } from "../../src/routing/attempt/event-reader.ts";
import { runChat } from "../../src/routing/pipeline.ts";
import { generate, requestScope } from "../../src/routes/generate.ts";
import type { LlamaTarget } from "../../src/config/config-schema.ts";
import { chatApi, validateChatRequest } from "../../src/api/chat/index.ts";
import { CompletionAggregator } from "../../src/api/chat/completion-aggregator.ts";
import { jsonResponse } from "../../src/responders/json-response.ts";
import { randomId } from "../../src/lib/ids.ts";
import type { SwitchyardExtension } from "../../src/events/switchyard-extension.ts";
import { buildLlamaBody } from "../../src/upstreams/llama/build-llama-body.ts";
import { LlamaUpstream } from "../../src/upstreams/llama/llama-upstream.ts";
import { llamaSseReader } from "../../src/upstreams/llama/parse-llama-sse.ts";
import { mapLlamaCompletion } from "../../src/upstreams/llama/map-llama-completion.ts";
import type { ChatCompletion } from "../../src/upstreams/wire/chat-chunk.ts";
import { llamaWire } from "../../src/upstreams/llama/llama-wire.ts";
import { postJson } from "../../src/upstreams/wire/post-json.ts";

export { AuthGuard, HealthHub, KeyGate, KeyStore, SessionHub } from "../../src/index.ts";

interface Env extends ConfigEnv {
  UPSTREAM_FAST: string;
}

const JSON_TYPE = { "content-type": "application/json" };
const decoder = new TextDecoder();
const EXTENSION = (): SwitchyardExtension => ({ target: "fast", attempts: 1 });

/** The answer as one chat completion, from an aggregator. */
function answer(aggregator: CompletionAggregator, model: string): Response {
  const meta = { id: randomId("chatcmpl-"), created: Math.floor(Date.now() / 1000), model, includeUsage: false };
  return new Response(JSON.stringify(aggregator.result(meta, EXTENSION)), { headers: JSON_TYPE });
}

/** The "gathering in JS" floor's own gathering: read the SSE body whole, take each frame's content. */
async function gatherText(up: Response): Promise<Response> {
  const reader = up.body!.getReader();
  let text = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
  let content = "";
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    content += (JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content ?? "";
  }
  return new Response(JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }), { headers: JSON_TYPE });
}

/** An SSE body read chunk by chunk through Switchyard's parser into its aggregator (no promise per event). */
async function parsed(up: Response): Promise<CompletionAggregator> {
  const aggregator = new CompletionAggregator();
  const parser = llamaSseReader("fast", (e) => aggregator.push(e));
  const reader = up.body!.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) parser.push(r.value);
  parser.end();
  return aggregator;
}

/** A request context for the adapter's own calls (postJson, LlamaUpstream.open). */
const attemptContext = (env: Env & Record<string, unknown>, deadlines = new Deadlines()) => ({ requestId: "req_decompose", signal: new AbortController().signal, responseStartMs: 120_000, deadlines, env });

const LAYERS: Record<string, (req: Request, env: Env & Record<string, unknown>, ctx: ExecutionContext) => Promise<Response>> = {
  /** The runtime's floor: the upstream's own non-stream answer, piped. */
  async native(req, env) {
    const up = await fetch(`${env.UPSTREAM_FAST}/v1/chat/completions`, { method: "POST", headers: JSON_TYPE, body: req.body });
    return new Response(up.body, { headers: JSON_TYPE });
  },
  /** + parse the request, ask for a stream, gather it in JS (the bench's "gathering in JS"). */
  async gather(req, env) {
    const body = JSON.parse(await req.text()) as Record<string, unknown>;
    return gatherText(await fetch(`${env.UPSTREAM_FAST}/v1/chat/completions`, { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ ...body, stream: true }) }));
  },
  /** + Switchyard's request reading and validation (size limit, UTF-8, zod). */
  async validate(req, env) {
    const request = validateChatRequest(await readJsonBody(req, loadConfig(env).limits.maxBodyBytes));
    return gatherText(await fetch(`${env.UPSTREAM_FAST}/v1/chat/completions`, { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ ...request, stream: true }) }));
  },
  /** + llama-server's request body and Switchyard's SSE parser and aggregator (no promises per event). */
  async parse(req, env) {
    const request = validateChatRequest(await readJsonBody(req, loadConfig(env).limits.maxBodyBytes));
    const body = buildLlamaBody(request, { kind: "llama", url: env.UPSTREAM_FAST } as LlamaTarget, "native");
    const up = await fetch(`${env.UPSTREAM_FAST}/v1/chat/completions`, { method: "POST", headers: JSON_TYPE, body: JSON.stringify(body) });
    return answer(await parsed(up), request.model);
  },
  /** + the upstream request as the adapter sends it (headers allow-list, abort signal, response-start deadline). */
  async post(req, env) {
    const request = validateChatRequest(await readJsonBody(req, loadConfig(env).limits.maxBodyBytes));
    const target = { kind: "llama", url: env.UPSTREAM_FAST } as LlamaTarget;
    const up = await postJson(llamaWire, target, "fast", "/chat/completions", buildLlamaBody(request, target, "native"), attemptContext(env), "text/event-stream");
    return answer(await parsed(up), request.model);
  },
  /**
   * Not a layer: `post` with a non-stream upstream request (`stream: false`, the answer read whole and
   * mapped to the same events), the design alternative for non-stream requests (docs/architecture.md).
   */
  async postWhole(req, env) {
    const request = validateChatRequest(await readJsonBody(req, loadConfig(env).limits.maxBodyBytes));
    const target = { kind: "llama", url: env.UPSTREAM_FAST } as LlamaTarget;
    const body: Record<string, unknown> = { ...buildLlamaBody(request, target, "native"), stream: false };
    delete body.stream_options;
    const up = await postJson(llamaWire, target, "fast", "/chat/completions", body, attemptContext(env), "application/json");
    const aggregator = new CompletionAggregator();
    for (const e of mapLlamaCompletion(JSON.parse(await up.text()) as ChatCompletion, "fast")) aggregator.push(e);
    return answer(aggregator, request.model);
  },
  /** + the adapter as the router uses it: events read one at a time with their timeouts (EventReader). */
  async adapter(req, env) {
    const config = loadConfig(env);
    const request = validateChatRequest(await readJsonBody(req, config.limits.maxBodyBytes));
    const deadlines = new Deadlines();
    const stream = await new LlamaUpstream("fast", { kind: "llama", url: env.UPSTREAM_FAST } as LlamaTarget).open(request, attemptContext(env, deadlines));
    const events = new EventReader(stream, "fast", config.timeouts, Date.now(), deadlines);
    const aggregator = new CompletionAggregator();
    // As the non-stream responder reads them: events already here without a wait (nextNow).
    for (let e = events.nextNow() ?? (await events.next()); e; e = events.nextNow() ?? (await events.next())) aggregator.push(e);
    return answer(aggregator, request.model);
  },
  /** + routing (targets, health signals, failover machinery) and the non-stream responder (commit grace, headers). */
  async route(req, env, ctx) {
    const config = loadConfig(env);
    const request = validateChatRequest(await readJsonBody(req, config.limits.maxBodyBytes));
    const vars = new Map<string, unknown>([["requestId", "req_decompose"]]);
    const c = { env, executionCtx: ctx, req: { raw: req }, get: (k: string) => vars.get(k), set: (k: string, v: unknown) => vars.set(k, v) } as unknown as Context<AppEnv>;
    const run = runChat(requestScope(c), config, request);
    const meta = { id: randomId("chatcmpl-"), created: Math.floor(Date.now() / 1000), model: request.model, includeUsage: false };
    const aggregator = new CompletionAggregator();
    return jsonResponse({ ...run.common, aggregator, result: () => aggregator.result(meta, run.extension) });
  },
};

/** The chat route in a Hono app with no middleware but the request id (which the route reads). */
const bareApp = new Hono<AppEnv>();
bareApp.use(async (c, next) => {
  c.set("requestId", "req_decompose");
  await next();
});
bareApp.post("/layer/hono/v1/chat/completions", generate(chatApi));
/** + routing (targets, health, failover) and the non-stream responder, as the route handler in Hono. */
LAYERS.hono = (req, env, ctx) => Promise.resolve(bareApp.fetch(req, env, ctx));

export default {
  fetch(req: Request, env: Env & Record<string, unknown>, ctx: ExecutionContext): Promise<Response> | Response {
    const path = new URL(req.url).pathname;
    if (!path.startsWith("/layer/")) return app.fetch(req, env, ctx);
    const layer = LAYERS[path.split("/")[2] ?? ""];
    return layer ? layer(req, env, ctx) : new Response("no such layer", { status: 404 });
  },
};
