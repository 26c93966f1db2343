// `GET /v1/responses` with `Upgrade: websocket`: the Responses API over one socket, as OpenAI offers
// it and Codex opens it first on its built-in provider.
import type { Context } from "hono";
import { createParser } from "eventsource-parser";
import type { AppEnv } from "../auth/app-env.ts";
import { chainAfter, chainedBody, readSocketMessage, type SocketChain } from "../api/responses/socket-turn.ts";
import { loadConfig } from "../config/load-config.ts";
import { CAPTURE_HEADER, capturedFor } from "../observability/capture.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { randomId } from "../lib/ids.ts";
import { usageJson } from "../api/responses/response-encoder.ts";

type Json = Record<string, unknown>;

/** Runs one request through the whole app (authentication, limits, the pipeline), as if it came over HTTP. */
export type Dispatch = (request: Request) => Promise<Response>;

// Headers of the upgrade that describe the socket, not a request sent over it.
const SOCKET_HEADERS = new Set(["upgrade", "connection", "content-length", "content-encoding", "content-type", "host", "x-request-id"]);

/**
 * Each `response.create` is answered as `POST /v1/responses` with `stream: true` would be, through
 * `dispatch` with the upgrade's own headers: the same key, scope and limits, checked again for every
 * response (a key revoked mid-session fails its next response), and every SSE event sent as one text
 * message. The socket itself holds no concurrency slot; its responses do, one at a time (OpenAI's
 * rule: a second `response.create` while one runs is refused). The connection holds the chain, so a
 * `previous_response_id` naming its last response works with `store: false`. No Durable Object: a
 * chain lives and dies with its socket, which one isolate holds.
 */
export function responsesSocket(c: Context<AppEnv>, dispatch: Dispatch): Response {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    // 426 makes Codex fall back to HTTP at once (405, 404 and 501 cost it seven retries).
    throw new ProxyError({ status: 426, code: "upgrade_required", message: "GET /v1/responses is the Responses API over a WebSocket; for HTTP, POST /v1/responses." });
  }
  const config = loadConfig(c.env);
  const maxBytes = config.limits.maxBodyBytes;
  const headers = new Headers();
  for (const [name, value] of c.req.raw.headers) if (!SOCKET_HEADERS.has(name) && !name.startsWith("sec-websocket-")) headers.set(name, value);
  headers.set("content-type", "application/json");
  const target = new URL("/v1/responses", c.req.url).toString();
  const pair = new WebSocketPair();
  const server = pair[1];
  server.accept();
  new ResponsesSocket(server, (body) => dispatch(new Request(target, { method: "POST", headers, body })), maxBytes);
  // Each response sent over the socket is captured or not as its own request is; its headers never
  // reach the client, so the upgrade tells the key holder instead (as things stand when it opens).
  const told = capturedFor(config.observability, c.get("principal")) ? { [CAPTURE_HEADER]: "on" } : undefined;
  return new Response(null, { status: 101, webSocket: pair[0], ...(told ? { headers: told } : {}) });
}

class ResponsesSocket {
  private last: SocketChain | null = null;
  private running: ReadableStreamDefaultReader<Uint8Array> | "starting" | null = null;
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly post: (body: string) => Promise<Response>,
    private readonly maxBytes: number,
  ) {
    ws.addEventListener("message", (e) => void this.onMessage(e.data));
    const stop = () => {
      this.closed = true;
      // The client left: cancelling the body is what tells the pipeline, which cancels the upstream.
      if (this.running && this.running !== "starting") this.running.cancel().catch(() => {});
    };
    ws.addEventListener("close", stop);
    ws.addEventListener("error", stop);
  }

  private async onMessage(data: string | ArrayBuffer): Promise<void> {
    if (typeof data !== "string") return this.error(400, "invalid_request_error", "invalid_message", "Send JSON text messages, not binary ones.");
    if (data.length > this.maxBytes) return this.error(413, "invalid_request_error", "request_too_large", `The message is larger than the ${this.maxBytes}-byte limit (limits.maxBodyBytes).`);
    const message = readSocketMessage(data);
    if (message.kind === "ignore") return;
    if (message.kind === "invalid") return this.error(400, "invalid_request_error", "invalid_message", message.message, message.param);
    if (this.running) {
      return this.error(400, "invalid_request_error", "response_in_progress", "A response is already running on this socket; wait for its response.completed (one response at a time per socket).");
    }
    const sent = chainedBody(message.body, this.last);
    if (!message.generate) return this.prepare(sent);
    await this.create(sent);
  }

  /**
   * `generate: false`: nothing runs; the response only records the conversation for the next one to
   * chain to. Its object has every field a Response requires, as a generated one has.
   */
  private prepare(sent: Json): void {
    const response = {
      id: randomId("resp_"),
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: typeof sent.instructions === "string" ? sent.instructions : null,
      model: typeof sent.model === "string" ? sent.model : "",
      output: [],
      parallel_tool_calls: sent.parallel_tool_calls !== false,
      tools: Array.isArray(sent.tools) ? sent.tools : [],
      tool_choice: "auto",
      temperature: null,
      top_p: null,
      metadata: {},
      usage: usageJson(null),
    };
    this.last = chainAfter(response.id, sent, []);
    this.send({ type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", usage: null } });
    this.send({ type: "response.completed", sequence_number: 1, response });
  }

  private async create(sent: Json): Promise<void> {
    this.running = "starting";
    try {
      const res = await this.post(JSON.stringify(sent));
      if (!res.ok || !res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
        const envelope = (await res.json().catch(() => null)) as { error?: Json } | null;
        const error = envelope?.error ?? { type: "api_error", code: "upstream_error", message: `The response failed with HTTP ${res.status}.` };
        this.send({ type: "error", status: res.status, error });
        return;
      }
      const reader = res.body.getReader();
      this.running = reader;
      if (this.closed) await reader.cancel();
      await this.relay(reader, sent);
    } catch (e) {
      if (!this.closed) this.error(500, "api_error", "internal_error", `The response failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = null;
    }
  }

  /** Each SSE event's data, one text message each; the completed response extends the chain. */
  private async relay(reader: ReadableStreamDefaultReader<Uint8Array>, sent: Json): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (event) => {
        this.send(event.data);
        if (event.event !== "response.completed" && event.event !== "response.incomplete") return;
        const response = (JSON.parse(event.data) as { response?: { id?: unknown; output?: unknown } }).response;
        if (typeof response?.id === "string" && Array.isArray(response.output)) this.last = chainAfter(response.id, sent, response.output as Json[]);
      },
    });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  }

  private error(status: number, type: string, code: string, message: string, param?: string): void {
    this.send({ type: "error", status, error: { type, code, message, param: param ?? null } });
  }

  private send(message: Json | string): void {
    if (this.closed) return;
    try {
      this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
    } catch {
      this.closed = true;
    }
  }
}
