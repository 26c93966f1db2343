// `GET /v1/responses` with `Upgrade: websocket`: the Responses API over one socket, as OpenAI offers
// it and Codex opens it first on its built-in provider.
import type { Context } from "hono";
import { createParser } from "eventsource-parser";
import type { AppEnv } from "../auth/app-env.ts";
import { chainAfter, chainedBody, chainsTo, readSocketMessage, SendPace, usageJson, utf8Bytes, type SocketChain } from "../api/responses/index.ts";
import { loadConfig } from "../config/load-config.ts";
import { CAPTURE_HEADER, capturedFor } from "../observability/capture.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { randomId } from "../lib/ids.ts";
import { KEY_REVOKED, SocketLease } from "./socket-lease.ts";

type Json = Record<string, unknown>;

/** Runs one request through the whole app (authentication, limits, the pipeline), as if it came over HTTP. */
export type Dispatch = (request: Request) => Promise<Response>;

/** Limits of one socket (limits.* in the configuration). */
interface SocketLimits {
  maxBytes: number;
  maxMessages: number;
  readBytesPerS: number;
}

/** Close codes of a socket Switchyard ends (docs/api.md). */
const CLOSE = {
  messageLimit: { code: 4429, reason: "too_many_socket_messages: open a new socket" },
  slowReader: { code: 4408, reason: "slow_reader: the client did not read the answer" },
} as const;

// What a message's fields have that its chained body does not (previous_response_id, the input's
// brackets): fields whose size, less this, added to the chain's is over the limit make too large a body.
const MESSAGE_FRAMING_BYTES = 1024;

// Messages waiting for the one before them to be checked: a client sending faster is refused at once.
const MAX_WAITING = 2;

// Headers of the upgrade that describe the socket, not a request sent over it.
const SOCKET_HEADERS = new Set(["upgrade", "connection", "content-length", "content-encoding", "content-type", "host", "x-request-id"]);

/**
 * Each `response.create` is answered as `POST /v1/responses` with `stream: true` would be, through
 * `dispatch` with the upgrade's own headers: the same key, scope and limits, checked again for every
 * response, and every SSE event sent as one text message. The socket itself holds no concurrency
 * slot; its responses do, one at a time (OpenAI's rule: a second `response.create` while one runs is
 * refused). The connection holds the chain, so a `previous_response_id` naming its last response
 * works with `store: false`. No Durable Object holds the socket: a chain lives and dies with it, in
 * one isolate. What one socket may make its isolate hold is bounded (docs/security.md): a key's
 * sockets (a lease from its KeyGate, limits.maxSocketsPerKey), messages per socket, the chained
 * conversation and each body (limits.maxBodyBytes, in UTF-8 bytes), and the answer sent but maybe
 * unread (SendPace). Every message is checked against the key as it is now, `generate: false`
 * included, and an idle socket every SOCKET_RENEW_MS: a revoked key's sockets close (4401).
 */
export async function responsesSocket(c: Context<AppEnv>, dispatch: Dispatch): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    // 426 makes Codex fall back to HTTP at once (405, 404 and 501 cost it seven retries).
    throw new ProxyError({ status: 426, code: "upgrade_required", message: "GET /v1/responses is the Responses API over a WebSocket; for HTTP, POST /v1/responses." });
  }
  const config = loadConfig(c.env);
  const { maxBodyBytes: maxBytes, maxMessagesPerSocket: maxMessages, socketReadBytesPerS: readBytesPerS, maxSocketsPerKey } = config.limits;
  const key = c.get("principal");
  const lease = key ? await SocketLease.take(c.env, key, maxSocketsPerKey) : null;
  const headers = new Headers();
  for (const [name, value] of c.req.raw.headers) if (!SOCKET_HEADERS.has(name) && !name.startsWith("sec-websocket-")) headers.set(name, value);
  headers.set("content-type", "application/json");
  const target = new URL("/v1/responses", c.req.url).toString();
  const pair = new WebSocketPair();
  const server = pair[1];
  server.accept();
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  new ResponsesSocket(server, (body) => dispatch(new Request(target, { method: "POST", headers, body })), { maxBytes, maxMessages, readBytesPerS }, lease, waitUntil);
  // Each response sent over the socket is captured or not as its own request is; its headers never
  // reach the client, so the upgrade tells the key holder instead (as things stand when it opens).
  const told = capturedFor(config.observability, key) ? { [CAPTURE_HEADER]: "on" } : undefined;
  return new Response(null, { status: 101, webSocket: pair[0], ...(told ? { headers: told } : {}) });
}

class ResponsesSocket {
  private last: SocketChain | null = null;
  private running: ReadableStreamDefaultReader<Uint8Array> | "starting" | null = null;
  private closed = false;
  private messages = 0;
  private waiting = 0;
  // Messages are checked one after another (the key is asked), so two cannot both start a response.
  private turn: Promise<void> = Promise.resolve();
  private readonly pace: SendPace;

  constructor(
    private readonly ws: WebSocket,
    private readonly post: (body: string) => Promise<Response>,
    private readonly limits: SocketLimits,
    private readonly lease: SocketLease | null,
    private readonly waitUntil: (p: Promise<unknown>) => void,
  ) {
    this.pace = new SendPace(limits.maxBytes, limits.readBytesPerS, Date.now());
    ws.addEventListener("message", (e) => this.onMessage(e.data));
    const stop = () => {
      this.closed = true;
      this.lease?.release(this.waitUntil);
      // The client left: cancelling the body is what tells the pipeline, which cancels the upstream.
      if (this.running && this.running !== "starting") this.running.cancel().catch(() => {});
    };
    ws.addEventListener("close", stop);
    ws.addEventListener("error", stop);
    lease?.watch(() => this.revoked());
  }

  private onMessage(data: string | ArrayBuffer): void {
    if (this.closed) return;
    if (++this.messages > this.limits.maxMessages) {
      this.error(429, "rate_limit_error", "too_many_socket_messages", `This socket took its ${this.limits.maxMessages} messages (limits.maxMessagesPerSocket); open a new one.`);
      return this.close(CLOSE.messageLimit);
    }
    if (typeof data !== "string") return this.error(400, "invalid_request_error", "invalid_message", "Send JSON text messages, not binary ones.");
    if (utf8Bytes(data) > this.limits.maxBytes) return this.tooLarge("The message");
    if (this.waiting >= MAX_WAITING) return this.inProgress();
    this.waiting++;
    this.turn = this.turn
      .then(() => this.take(data))
      .catch((e) => this.error(500, "api_error", "internal_error", `The message failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => this.waiting--);
  }

  /** One message, once the key may still send it: refused, prepared, or a response started (not awaited). */
  private async take(data: string): Promise<void> {
    // A check that fails (the KeyGate unreachable) lets the message through: the renewal tries again.
    if (this.lease && !(await this.lease.check().catch(() => true))) return this.revoked();
    if (this.closed) return;
    const message = readSocketMessage(data);
    if (message.kind === "ignore") return;
    if (message.kind === "invalid") return this.error(400, "invalid_request_error", "invalid_message", message.message, message.param);
    if (this.running) return this.inProgress();
    // A conversation past the body limit was not kept, and one that cannot take this message is not
    // rebuilt to find out: either way the response chained to it could not be sent.
    const chained = chainsTo(message.body, this.last);
    if (chained && this.last!.itemsJson === null) return this.tooLarge("The conversation chained by previous_response_id");
    if (chained && this.last!.bytes + utf8Bytes(JSON.stringify(message.body)) - MESSAGE_FRAMING_BYTES > this.limits.maxBytes) return this.tooLarge("The conversation with this message");
    const sent = chainedBody(message.body, this.last);
    const text = JSON.stringify(sent);
    if (utf8Bytes(text) > this.limits.maxBytes) return this.tooLarge("The conversation with this message");
    if (!message.generate) return this.prepare(sent);
    this.running = "starting";
    void this.create(sent, text);
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
    this.last = chainAfter(response.id, sent, [], this.limits.maxBytes);
    this.send({ type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", usage: null } });
    this.send({ type: "response.completed", sequence_number: 1, response });
  }

  private async create(sent: Json, text: string): Promise<void> {
    try {
      const res = await this.post(text);
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

  /**
   * Each SSE event's data, one text message each; the completed response extends the chain. The
   * upstream is read only while the pace allows: past it, the upstream waits as it would behind an
   * HTTP client that does not read, and a response held back too long closes the socket (4408).
   */
  private async relay(reader: ReadableStreamDefaultReader<Uint8Array>, sent: Json): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (event) => {
        this.send(event.data);
        if (event.event !== "response.completed" && event.event !== "response.incomplete") return;
        const response = (JSON.parse(event.data) as { response?: { id?: unknown; output?: unknown } }).response;
        if (typeof response?.id === "string" && Array.isArray(response.output)) this.last = chainAfter(response.id, sent, response.output as Json[], this.limits.maxBytes);
      },
    });
    this.pace.startResponse();
    while (!this.closed) {
      const step = this.pace.next(Date.now());
      if (step.kind === "give-up") {
        this.close(CLOSE.slowReader);
        await reader.cancel().catch(() => {});
        return;
      }
      if (step.kind === "wait") {
        await new Promise((resolve) => setTimeout(resolve, step.ms));
        continue;
      }
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  }

  private tooLarge(what: string): void {
    this.error(413, "invalid_request_error", "request_too_large", `${what} is larger than the ${this.limits.maxBytes}-byte limit (limits.maxBodyBytes, UTF-8 bytes). Start a new conversation (without previous_response_id, or on a new socket) or send less.`);
  }

  private inProgress(): void {
    this.error(400, "invalid_request_error", "response_in_progress", "A response is already running on this socket; wait for its response.completed (one response at a time per socket).");
  }

  private error(status: number, type: string, code: string, message: string, param?: string): void {
    this.send({ type: "error", status, error: { type, code, message, param: param ?? null } });
  }

  private send(message: Json | string): void {
    if (this.closed) return;
    const text = typeof message === "string" ? message : JSON.stringify(message);
    try {
      this.ws.send(text);
      this.pace.sent(utf8Bytes(text), Date.now());
    } catch {
      this.closed = true;
    }
  }

  /** The key was revoked: an error event says so, then the socket closes. */
  private revoked(): void {
    this.error(KEY_REVOKED.status, "authentication_error", KEY_REVOKED.error, KEY_REVOKED.message);
    this.close(KEY_REVOKED);
  }

  /** Ends the socket from this side: the close code and reason say why (docs/api.md). */
  private close(why: { code: number; reason: string }): void {
    if (this.closed) return;
    this.closed = true;
    this.lease?.release(this.waitUntil);
    if (this.running && this.running !== "starting") this.running.cancel().catch(() => {});
    try {
      this.ws.close(why.code, why.reason);
    } catch {}
  }
}
