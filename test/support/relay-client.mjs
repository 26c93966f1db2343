// A session client written from docs/relay-protocol.md alone: gets a ticket with the serve token,
// connects, says hello, pings, and serves relayed requests with any engine that has web-llm's
// interface (`chat.completions.create`, `completions.create`, `embeddings.create`, `interruptGenerate`).
// Each request goes to the engine call its `endpoint` names (absent = chat). The hello announces
// completions when the engine has `completions.create`, and `embeddingModels` (the models that are
// web-llm embedding models; they serve embeddings only). Node 22 (global WebSocket) or a browser.

/**
 * The hub's messages (src/schemas/relay.ts).
 * @typedef {Extract<import("../../src/schemas/relay.ts").HubMessage, { type: "request" }>} RelayRequest
 * @typedef {Extract<import("../../src/schemas/relay.ts").HubMessage, { type: "welcome" }>} Welcome
 */

/**
 * The engine calls the client makes: web-llm's interface, with bodies and chunks as the relay carries them
 * (of a chunk, the client reads only `usage`).
 * @typedef {{ create(body: Record<string, unknown>): Promise<AsyncIterable<Record<string, unknown> & { usage?: unknown }>> }} ChunkCalls
 * @typedef {object} Engine
 * @property {{ completions: ChunkCalls }} chat
 * @property {ChunkCalls} [completions]
 * @property {{ create(body: Record<string, unknown>): Promise<unknown> }} [embeddings]
 * @property {() => void} interruptGenerate
 */

/**
 * @param {{ baseUrl: string, token: string, models: string[], engine: Engine, pingIntervalMs?: number, embeddingModels?: string[] }} options
 */
export async function startRelayClient({ baseUrl, token, models, engine, pingIntervalMs, embeddingModels = [] }) {
  const res = await fetch(`${baseUrl}/v1/sessions/ticket`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`ticket refused: ${res.status} ${await res.text()}`);
  const { ticket } = /** @type {{ ticket: string }} */ (await res.json());
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/sessions?ticket=${encodeURIComponent(ticket)}`);
  const stats = {
    served: 0,
    failed: 0,
    cancelled: 0,
    /** @type {Set<string>} */
    running: new Set(),
    maxRunning: 0,
    /** @type {RelayRequest[]} */
    requests: [],
    /** @type {string[]} */
    cancels: [],
    queue: 0,
  };
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  const closed = new Promise((resolve) => ws.addEventListener("close", (e) => { clearInterval(timer); resolve({ code: e.code, reason: e.reason }); }));
  /** @param {{ type: string, [field: string]: unknown }} msg */
  const send = (msg) => ws.send(JSON.stringify(msg));

  /** @type {Welcome} */
  const welcome = await new Promise((resolve, reject) => {
    ws.addEventListener("error", () => reject(new Error("socket error before welcome")), { once: true });
    ws.addEventListener("open", () => send({ type: "hello", version: 1, models, agent: "relay-client.mjs", capabilities: { completions: typeof engine.completions?.create === "function", ...(embeddingModels.length ? { embeddingModels } : {}) } }), { once: true });
    closed.then((c) => reject(new Error(`closed before welcome: ${c.code} ${c.reason}`)));
    ws.addEventListener("message", function first(e) {
      const msg = JSON.parse(e.data);
      if (msg.type === "welcome") {
        ws.removeEventListener("message", first);
        resolve(msg);
      }
    });
  });
  timer = setInterval(() => ws.send('{"type":"ping"}'), pingIntervalMs ?? welcome.pingIntervalMs);

  /** @param {RelayRequest} msg */
  async function serve(msg) {
    stats.requests.push(msg);
    stats.running.add(msg.id);
    stats.maxRunning = Math.max(stats.maxRunning, stats.running.size);
    try {
      if (msg.endpoint === "embeddings") {
        // The whole answer as one chunk, then done.
        if (!engine.embeddings) throw Object.assign(new Error("this engine has no embeddings.create"), { name: "UnsupportedEndpoint" });
        const result = await engine.embeddings.create(msg.body);
        const text = JSON.stringify({ type: "chunk", id: msg.id, data: result });
        if (text.length > 1_048_576) throw Object.assign(new Error("the embeddings are larger than one relay message (1 MiB); send fewer inputs per request"), { name: "MessageTooLarge" });
        stats.served++;
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(text);
          send({ type: "done", id: msg.id, usage: null });
        }
        return;
      }
      const api = msg.endpoint === "completions" ? engine.completions : engine.chat.completions;
      if (!api) throw Object.assign(new Error("this engine has no completions.create"), { name: "UnsupportedEndpoint" });
      /** @type {unknown} */
      let usage = null;
      for await (const chunk of await api.create(msg.body)) {
        if (chunk.usage) usage = chunk.usage;
        if (ws.readyState === WebSocket.OPEN) send({ type: "chunk", id: msg.id, data: chunk });
      }
      stats.served++;
      if (ws.readyState === WebSocket.OPEN) send({ type: "done", id: msg.id, usage });
    } catch (e) {
      stats.failed++;
      const err = /** @type {{ name?: unknown, message?: unknown } | null | undefined} */ (e);
      if (ws.readyState === WebSocket.OPEN) send({ type: "error", id: msg.id, kind: String(err?.name ?? "Error").slice(0, 100), message: String(err?.message ?? e).slice(0, 4000) });
    } finally {
      stats.running.delete(msg.id);
    }
  }

  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === "request") void serve(msg);
    else if (msg.type === "cancel") {
      stats.cancels.push(msg.id);
      if (stats.running.has(msg.id)) {
        stats.cancelled++;
        engine.interruptGenerate();
      }
    } else if (msg.type === "queue") stats.queue = msg.waiting;
  });

  return {
    welcome,
    stats,
    closed,
    close() {
      clearInterval(timer);
      ws.close(1000, "done");
      return closed;
    },
  };
}
