// The page's session client (docs/relay-protocol.md): ticket → WebSocket → hello, pings, one running
// request per model (the hub guarantees it), abort + drain on cancel, reconnect with backoff. Each
// request goes to the engine (engines/engine.js, web-llm or llama.cpp alike) by its `endpoint`: chat
// (absent) and "completions" → engine.generate, "embeddings" → engine.embed (one chunk, the whole answer).
import { MAX_MESSAGE_BYTES, PING_TEXT, RELAY_VERSION, messageBytes, parseHubMessage } from "../src/schemas/relay.ts";
import { errorParts } from "./describe-error.ts";
import { decodeRate } from "./engines/engine.js";

/**
 * @typedef {Extract<import("../src/schemas/relay.ts").HubMessage, { type: "request" }>} RelayRequest
 * @typedef {import("./engines/engine.js").Engine} Engine
 * @typedef {import("./engines/engine.js").ChunkData} ChunkData
 */

/**
 * A message to the hub (`PageMessage`), with the engine's own objects as a chunk's `data` and a done's
 * `usage`: the hub checks those with its loose schemas.
 * @typedef {Exclude<import("../src/schemas/relay.ts").PageMessage, { type: "chunk" | "done" }>
 *   | { type: "chunk", id: string, data: ChunkData | Record<string, unknown> }
 *   | { type: "done", id: string, usage: ChunkData["usage"] | null }} PageMessage
 */

/**
 * What the page shows about its session.
 * @typedef {object} ServeStats
 * @property {"off" | "connecting" | "serving" | "reconnecting" | "refused"} state
 * @property {number} served
 * @property {number} failed
 * @property {number | null} tokensPerSecond of the last chat or completions request
 * @property {number} waiting requests queued at the hub for this page's model
 * @property {string | null} running the id of the request being generated
 * @property {string} message one sentence for the person
 */

export class ServeSession {
  /**
   * @param {object} options
   * @param {string} options.baseUrl the Switchyard origin
   * @param {string} options.token the serve token
   * @param {Engine} options.engine the loaded model (its id is announced)
   * @param {import("../src/schemas/relay.ts").Hello["capabilities"]} options.capabilities sent in `hello`
   * @param {(stats: ServeStats) => void} [options.onChange] called on every change of the stats
   */
  constructor({ baseUrl, token, engine, capabilities, onChange }) {
    this.baseUrl = baseUrl;
    this.token = token;
    this.engine = engine;
    this.model = engine.model;
    this.capabilities = capabilities;
    this.onChange = onChange;
    /** @type {ServeStats} */
    this.stats = { state: "off", served: 0, failed: 0, tokensPerSecond: null, waiting: 0, running: null, message: "" };
    /** Whether serving is switched on (a closed connection is then reopened). */
    this.wanted = false;
    this.backoffMs = 1000;
    /** @type {WebSocket | null} */
    this.ws = null;
    /** @type {{ stop(): void } | null} */
    this.pingTimer = null;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.retryTimer = undefined;
    /** @type {RelayRequest | null} */
    this.running = null;
    /** Aborts the running request's generation (a cancel, or serving switched off). */
    this.abort = new AbortController();
    /**
     * The id of the request running when serving was switched off: what it still yields is dropped.
     * @type {string | null}
     */
    this.abandoned = null;
  }

  stopPings() {
    this.pingTimer?.stop();
    this.pingTimer = null;
  }

  /** @param {Partial<ServeStats>} patch */
  set(patch) {
    Object.assign(this.stats, patch);
    this.onChange?.(this.stats);
  }

  start() {
    this.wanted = true;
    void this.connect();
  }

  stop() {
    this.wanted = false;
    clearTimeout(this.retryTimer);
    this.stopPings();
    if (this.running) {
      this.abandoned = this.running.id;
      this.abort.abort();
    }
    this.ws?.close(1000, "serving switched off");
    this.set({ state: "off", message: "Not serving." });
  }

  async connect() {
    this.set({ state: "connecting", message: "Connecting to Switchyard…" });
    try {
      const res = await fetch(`${this.baseUrl}/v1/sessions/ticket`, { method: "POST", headers: { authorization: `Bearer ${this.token}` } });
      if (res.status === 401 || res.status === 403) {
        /** @type {{ error?: { message?: string } }} */
        const body = await res.json().catch(() => ({}));
        this.wanted = false;
        this.set({ state: "refused", message: `Switchyard refused this page: ${body.error?.message ?? res.status}` });
        return;
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      /** @type {{ ticket: string }} */
      const { ticket } = await res.json();
      const ws = new WebSocket(`${this.baseUrl.replace(/^http/, "ws")}/v1/sessions?ticket=${encodeURIComponent(ticket)}`);
      this.ws = ws;
      ws.onopen = () => this.send({ type: "hello", version: RELAY_VERSION, models: [this.model], capabilities: this.capabilities, agent: navigator.userAgent.slice(0, 200) });
      ws.onmessage = (e) => this.onMessage(e.data);
      ws.onclose = (e) => this.onClose(e);
    } catch (e) {
      this.retry(`Could not reach Switchyard (${e instanceof Error ? e.message : e}).`);
    }
  }

  /** @param {CloseEvent} e */
  onClose(e) {
    this.stopPings();
    if (this.ws?.readyState !== WebSocket.OPEN) this.ws = null;
    if (!this.wanted) return;
    if (e.code === 4400) {
      this.wanted = false;
      this.set({ state: "refused", message: `Switchyard speaks another protocol version: ${e.reason}. Reload the page.` });
      return;
    }
    this.retry(`The connection closed (${e.code}${e.reason ? `: ${e.reason}` : ""}).`);
  }

  /** @param {string} why */
  retry(why) {
    if (!this.wanted) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    this.set({ state: "reconnecting", message: `${why} Reconnecting in ${Math.round(wait / 1000)} s.` });
    this.retryTimer = setTimeout(() => this.connect(), wait);
  }

  /** @param {PageMessage} msg */
  send(msg) {
    const text = JSON.stringify(msg);
    if (messageBytes(text) > MAX_MESSAGE_BYTES) {
      if ("id" in msg && msg.id) this.ws?.send(JSON.stringify({ type: "error", id: msg.id, kind: "MessageTooLarge", message: "a chunk exceeded the relay's 1 MiB message limit" }));
      return;
    }
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  /** @param {unknown} text a message's data */
  onMessage(text) {
    const parsed = parseHubMessage(String(text));
    if (!parsed.ok) return;
    const msg = parsed.message;
    if (msg.type === "welcome") {
      this.backoffMs = 1000;
      this.stopPings();
      this.pingTimer = heartbeat(msg.pingIntervalMs, () => this.ws?.readyState === WebSocket.OPEN && this.ws.send(PING_TEXT));
      const what = this.capabilities?.embeddingModels?.includes(this.model) ? " (embeddings)" : "";
      this.set({ state: "serving", message: `Serving ${this.model}${what} for the team.` });
    } else if (msg.type === "request") void this.serve(msg);
    else if (msg.type === "cancel") {
      if (this.running?.id === msg.id) this.abort.abort();
    } else if (msg.type === "queue") this.set({ waiting: msg.waiting });
    // Something this page sent was not taken as sent (e.g. usage outside what the request allows).
    else if (msg.type === "notice") console.warn(`Switchyard: ${msg.code} for ${msg.id}: ${msg.message}`);
  }

  /** @param {RelayRequest} msg */
  async serve(msg) {
    this.running = msg;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.set({ running: msg.id });
    try {
      // The hub adapted the body for the engine call (src/upstreams/browser/): the engine checks it.
      const body = /** @type {Record<string, unknown>} */ (msg.body);
      if (msg.endpoint === "embeddings") {
        if (!this.engine.embed) throw Object.assign(new Error(`${this.model} is not an embedding model`), { name: "EmbeddingUnsupportedModelError" });
        const result = await this.engine.embed(body);
        if (this.abandoned === msg.id) return;
        this.send({ type: "chunk", id: msg.id, data: result });
        this.send({ type: "done", id: msg.id, usage: null });
        this.set({ served: this.stats.served + 1 });
        return;
      }
      const chunks = await this.engine.generate(msg.endpoint === "completions" ? "completions" : "chat", body, signal);
      /** @type {ChunkData | null} */
      let last = null;
      const started = performance.now();
      let tokens = 0;
      for await (const chunk of chunks) {
        if (chunk.usage) last = chunk;
        const choice = chunk.choices?.[0];
        if (choice && ("delta" in choice ? choice.delta?.content : choice.text)) tokens++;
        if (this.abandoned !== msg.id) this.send({ type: "chunk", id: msg.id, data: chunk });
      }
      if (this.abandoned === msg.id) return;
      const secs = (performance.now() - started) / 1000;
      const rate = signal.aborted ? this.stats.tokensPerSecond : (decodeRate(last) ?? (secs > 0 && tokens > 0 ? tokens / secs : null));
      this.send({ type: "done", id: msg.id, usage: last?.usage ?? null });
      this.set({ served: this.stats.served + 1, tokensPerSecond: rate });
    } catch (e) {
      const { kind, message } = errorParts(e);
      this.send({ type: "error", id: msg.id, kind, message: message.slice(0, 4000) });
      this.set({ failed: this.stats.failed + 1 });
    } finally {
      this.running = null;
      this.set({ running: null });
    }
  }
}

/**
 * Calls `tick` every `ms`, from a tiny dedicated Worker: browsers throttle timers in background tabs
 * (Chrome to once a minute), which would let the hub declare a serving tab dead.
 * @param {number} ms
 * @param {() => unknown} tick
 * @returns {{ stop(): void }}
 */
function heartbeat(ms, tick) {
  try {
    const url = URL.createObjectURL(new Blob([`setInterval(() => postMessage(0), ${Number(ms)});`], { type: "text/javascript" }));
    const worker = new Worker(url);
    worker.onmessage = tick;
    return { stop: () => (worker.terminate(), URL.revokeObjectURL(url)) };
  } catch {
    const id = setInterval(tick, ms);
    return { stop: () => clearInterval(id) };
  }
}
