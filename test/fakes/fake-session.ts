// A serving page as the hub sees it, for tests inside workerd: speaks the relay protocol over an
// accepted WebSocket and answers requests with the fake web-llm engine (or lets the test answer).
// @ts-expect-error: plain JS module without types
import { FakeEngine } from "./fake-web-llm.mjs";

export type Msg = Record<string, any>;

export class FakeSession {
  readonly inbox: Msg[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | null = null;
  /** Request ids currently generating in the engine, and the most that ever ran at once. */
  running = new Set<string>();
  maxRunning = 0;
  served = 0;
  readonly engine: any;
  private streams = new Map<string, AsyncIterator<Msg>>();

  constructor(
    readonly ws: WebSocket,
    opts: { auto?: boolean; tokenDelayMs?: number; engine?: unknown } = {},
  ) {
    this.engine = opts.engine ?? new FakeEngine({ tokenDelayMs: opts.tokenDelayMs ?? 5 });
    ws.accept();
    ws.addEventListener("message", (e) => {
      const msg = JSON.parse(String(e.data)) as Msg;
      this.inbox.push(msg);
      if (opts.auto !== false) {
        if (msg.type === "request") void this.answer(msg);
        if (msg.type === "cancel") this.cancel(msg.id);
      }
      this.wake();
    });
    ws.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
      this.wake();
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(msg: Msg | string) {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  /** Waits until a message matching `pred` has arrived (and returns it), or the socket closed. */
  async next(pred: (m: Msg) => boolean, timeoutMs = 5000): Promise<Msg> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.inbox.find(pred);
      if (found) return found;
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) while waiting`);
      if (Date.now() > deadline) throw new Error(`timed out waiting; inbox: ${JSON.stringify(this.inbox.map((m) => m.type))}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  async waitClosed(timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  async hello(models: string[], version = 1, capabilities: Msg = {}): Promise<Msg> {
    this.engine.loaded ??= models[0];
    this.send({ type: "hello", version, models, capabilities: { shaderF16: false, adapter: "fake", ...capabilities } });
    return this.next((m) => m.type === "welcome");
  }

  /**
   * Serves one request the way the page does: run it on the engine call its `endpoint` names, forward
   * every chunk unchanged (embeddings: the whole answer as one chunk), then done or error.
   */
  async answer(req: Msg): Promise<void> {
    this.running.add(req.id);
    this.maxRunning = Math.max(this.maxRunning, this.running.size);
    let usage: unknown = null;
    try {
      if (req.endpoint === "embeddings") {
        const result = await this.engine.embeddings.create(req.body);
        this.send({ type: "chunk", id: req.id, data: result });
        this.served++;
        this.send({ type: "done", id: req.id, usage: null });
        return;
      }
      const api = req.endpoint === "completions" ? this.engine.completions : this.engine.chat.completions;
      const it = (await api.create(req.body))[Symbol.asyncIterator]() as AsyncIterator<Msg>;
      this.streams.set(req.id, it);
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        if (r.value.usage) usage = r.value.usage;
        this.send({ type: "chunk", id: req.id, data: r.value });
      }
      this.served++;
      this.send({ type: "done", id: req.id, usage });
    } catch (e) {
      const err = e as Error;
      this.send({ type: "error", id: req.id, kind: err.name, message: err.message });
    } finally {
      this.running.delete(req.id);
      this.streams.delete(req.id);
    }
  }

  /** Interrupt only if this request is the one generating; the answer loop then drains it. */
  cancel(id: string) {
    if (this.running.has(id)) this.engine.interruptGenerate();
  }
}
