import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call } from "../workerd/harness.ts";
import { chat, outcome } from "./fault-harness.ts";

// A browser tab that says its model is not loaded (web-llm's ModelNotLoadedError) while a request
// waits for it (issue 40, finding 12: 204 requests reached one such tab in 60 s, and the client waited
// out queue.maxWaitMs). The hub benches the tab for that model (1 s, doubling) and holds a request for
// it until the bench ends or a session announces the model; routing comes back for it only while its
// Retry-After is within retries.maxRetryAfterMs (docs/relay-protocol.md §4).
const TOKEN = "serve-secret-for-loading-tests";
let n = 0;
const uniqueModel = () => `Loading-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;

/** A page that announces `model` and answers every request with ModelNotLoadedError; `asked` counts them. */
async function notLoaded(model: string): Promise<FakeSession & { asked(): number }> {
  const s = await connect();
  s.ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { type: string; id?: string };
    if (msg.type === "request") s.send({ type: "error", id: msg.id!, kind: "ModelNotLoadedError", message: `Model not loaded before trying to complete ChatCompletionRequest. Please ensure you have called MLCEngine.reload(model) to load the model before initiating chat operations, or initialize your engine using CreateMLCEngine() with a valid model configuration.` });
  });
  await s.hello([model]);
  return Object.assign(s, { asked: () => s.inbox.filter((m) => m.type === "request").length });
}

async function connect(auto = false): Promise<FakeSession> {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  return new FakeSession(res.webSocket!, { auto });
}

// maxWaitMs is long enough that waiting it out fails the test; maxRetryAfterMs 1000 keeps it short:
// the tab is asked at once, then once more when its 1 s bench ends; its next Retry-After is 2 s.
// commitMs 5000 keeps the answer's status and Retry-After header (past commitMs a response is
// committed as 200 and the same code arrives in its error frame or envelope, as for any wait).
const cfg = (model: string, extra: Record<string, unknown> = {}) => ({
  SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [{ kind: "browser", model }] } }, queue: { maxWaitMs: 6000 }, retries: { maxRetryAfterMs: 1000 }, timeouts: { commitMs: 5000, heartbeatMs: 100 }, ...extra }),
  SERVE_TOKEN: TOKEN,
});

describe("a tab that keeps saying its model is not loaded", () => {
  it("is asked at most twice by one waiting request, which gets 503 model_loading + Retry-After well before queue.maxWaitMs", async () => {
    const model = uniqueModel();
    const tab = await notLoaded(model);
    const { res, started } = await chat({ stream: false, vars: cfg(model) });
    const retryAfter = res.headers.get("retry-after");
    const got = await outcome(res, started);
    expect(got).toMatchObject({ status: 503, code: "model_loading" });
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(got.elapsed).toBeLessThan(3000);
    expect(tab.asked()).toBeLessThanOrEqual(2);
    // A request arriving while the tab is benched is answered from the bench, without asking it.
    const before = tab.asked();
    const again = await chat({ stream: true, vars: cfg(model) });
    const second = await outcome(again.res, again.started);
    expect(second).toMatchObject({ status: 503, code: "model_loading" });
    expect(second.elapsed).toBeLessThan(2500);
    expect(tab.asked() - before).toBeLessThanOrEqual(1);
    tab.ws.close();
  });
});

describe("a tab that keeps saying its model is not loaded, and several requests waiting for it", () => {
  it("gets at most one request per bench between them: 4 requests, 2 asks", async () => {
    const model = uniqueModel();
    const tab = await notLoaded(model);
    const answers = await Promise.all([0, 1, 2, 3].map(async (i) => {
      const { res, started } = await chat({ stream: i % 2 === 0, vars: cfg(model) });
      return outcome(res, started);
    }));
    for (const got of answers) {
      expect(got).toMatchObject({ status: 503, code: "model_loading" });
      expect(got.elapsed).toBeLessThan(3000);
    }
    expect(tab.asked()).toBeLessThanOrEqual(2);
    tab.ws.close();
  });
});

describe("a tab that really is loading", () => {
  it("the waiting request is served as soon as a session announces the model, without asking the loading tab again", async () => {
    const model = uniqueModel();
    const tab = await notLoaded(model);
    const pending = chat({ stream: false, vars: cfg(model, { retries: { maxRetryAfterMs: 2000 } }) });
    await tab.next((m) => m.type === "request");
    // The page reloaded the model and announces it (a new socket: hello is once per socket).
    const ready = await connect(true);
    await ready.hello([model]);
    const announced = Date.now();
    const { res, started } = await pending;
    const got = await outcome(res, started);
    expect(got).toMatchObject({ status: 200 });
    expect(Date.now() - announced).toBeLessThan(1000);
    expect(ready.served).toBe(1);
    expect(tab.asked()).toBe(1);
    tab.ws.close();
    ready.ws.close();
  });
});
