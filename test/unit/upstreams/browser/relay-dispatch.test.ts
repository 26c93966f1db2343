import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../../../src/schemas/relay.ts";
import { moveTarget, placeRelay, refuseOversize, type RelayStart } from "../../../../src/upstreams/browser/relay-dispatch.ts";
import { MAX_QUEUE_PER_MODEL, RelayQueue, type Queued } from "../../../../src/upstreams/browser/relay-queue.ts";
import type { Session } from "../../../../src/upstreams/browser/session.ts";

const M = "Qwen-q4f16_1-MLC";
const session = (sessionId: string, extra: Partial<Session> = {}): Session => ({ sessionId, connectedAt: 0, models: [M], ready: true, ...extra });
const start = (extra: Partial<RelayStart> = {}): RelayStart => ({ id: "rl_1", model: M, body: {}, ...extra });
/** A queue with `n` requests for M on each session named. */
function loaded(loads: Record<string, number>): RelayQueue<Queued> {
  const q = new RelayQueue<Queued>();
  let i = 0;
  for (const [sessionId, n] of Object.entries(loads)) for (let k = 0; k < n; k++) q.add({ id: `q${i++}`, sessionId, model: M, state: k === 0 ? "running" : "queued" });
  return q;
}
const placed = (p: ReturnType<typeof placeRelay>) => (p.ok ? p.sessionId : null);
const refused = (p: ReturnType<typeof placeRelay>) => (p.ok ? null : p.refusal);

describe("placeRelay: which session takes a relayed request", () => {
  it("the least loaded ready session serving the model; a session before hello, or with other models, is none", () => {
    const sessions = [session("s1"), session("s2"), session("s3", { ready: false }), session("s4", { models: ["other"] })];
    expect(placed(placeRelay(start(), sessions, loaded({ s1: 2, s2: 1 })))).toBe("s2");
    expect(placed(placeRelay(start(), sessions, loaded({ s1: 0, s2: 1 })))).toBe("s1");
  });

  it("only sessions whose grant admits the asking key; none: 503 saying so (unable for non-chat endpoints)", () => {
    const alices = session("s1", { grant: { keyId: "serve_1", serves: ["key_alice"] } });
    const everyones = session("s2", { grant: { keyId: null, serves: null } });
    expect(placed(placeRelay(start({ keyId: "key_bob" }), [alices, everyones], loaded({ s2: 3 })))).toBe("s2");
    expect(placed(placeRelay(start({ keyId: "key_alice" }), [alices, everyones], loaded({ s2: 3 })))).toBe("s1");
    const chat = refused(placeRelay(start({ keyId: "key_bob" }), [alices], loaded({})));
    expect(chat).toMatchObject({ status: 503, body: { status: 503, code: "no_capacity", retryAfter: 5 } });
    expect(chat?.body.message).toContain("take only other keys' requests");
    expect(chat?.body.unable).toBeUndefined();
    const completions = session("s1", { grant: { keyId: "serve_1", serves: [] }, capabilities: { completions: true } });
    expect(refused(placeRelay(start({ endpoint: "completions" }), [completions], loaded({})))?.body.unable).toBe(true);
  });

  it("among equally loaded sessions, the faster engine first; a slow CPU tab only when the faster ones are busier", () => {
    const cpu = session("cpu", { capabilities: { engine: "llama.cpp", backend: "CPU, 1 thread", tokensPerSecond: 12 } });
    const gpu = session("gpu", { capabilities: { engine: "llama.cpp", backend: "WebGPU", tokensPerSecond: 90 } });
    const unmeasured = session("webllm", { capabilities: { engine: "web-llm" } });
    expect(placed(placeRelay(start(), [cpu, gpu], loaded({})))).toBe("gpu");
    expect(placed(placeRelay(start(), [cpu, unmeasured], loaded({})))).toBe("webllm");
    expect(placed(placeRelay(start(), [cpu, gpu], loaded({ gpu: 1 })))).toBe("cpu");
  });

  it("the context window: a prompt of as many tokens as the window does not fit, one fewer does; an unknown window fits", () => {
    const small = session("s1", { capabilities: { contextWindows: { [M]: 4096 } } });
    const large = session("s2", { capabilities: { contextWindows: { [M]: 8192 } } });
    const unknown = session("s3");
    const q = loaded({ s1: 0, s2: 1, s3: 2 });
    expect(placed(placeRelay(start({ promptTokens: 4095 }), [small, large], q))).toBe("s1");
    expect(placed(placeRelay(start({ promptTokens: 4096 }), [small, large], q))).toBe("s2");
    expect(placed(placeRelay(start({ promptTokens: 9000 }), [small, large, unknown], q))).toBe("s3");
    // No estimate sent: every window fits.
    expect(placed(placeRelay(start(), [small, large], q))).toBe("s1");
  });

  it("no admitted session's window holds the prompt: 400 context_length_exceeded naming the largest window, unable", () => {
    const small = session("s1", { capabilities: { contextWindows: { [M]: 4096 } } });
    const large = session("s2", { capabilities: { contextWindows: { [M]: 8192 } } });
    // A larger window on a session the key may not use is not named.
    const others = session("s3", { capabilities: { contextWindows: { [M]: 32768 } }, grant: { keyId: "k", serves: [] } });
    const r = refused(placeRelay(start({ promptTokens: 9000 }), [small, large, others], loaded({})));
    expect(r).toEqual({
      status: 400,
      body: {
        status: 400,
        code: "context_length_exceeded",
        param: "messages",
        unable: true,
        message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
      },
    });
  });

  it("sessions with the model that do not serve the endpoint: 503 unable; no session with it at all: 503", () => {
    const chatOnly = session("s1");
    const completions = refused(placeRelay(start({ endpoint: "completions" }), [chatOnly], loaded({})));
    expect(completions?.body).toMatchObject({ code: "no_capacity", unable: true, message: `No browser session serving ${M} can serve /v1/completions with it.` });
    expect(refused(placeRelay(start({ endpoint: "embeddings" }), [chatOnly], loaded({})))?.body.message).toContain("only with its embedding models");
    const embedder = session("s2", { capabilities: { embeddingModels: [M] } });
    expect(placed(placeRelay(start({ endpoint: "embeddings" }), [chatOnly, embedder], loaded({})))).toBe("s2");
    expect(refused(placeRelay(start(), [embedder], loaded({})))?.body.message).toContain("No browser session is serving");
    const none = refused(placeRelay(start(), [], loaded({})));
    expect(none).toMatchObject({ status: 503, body: { code: "no_capacity", retryAfter: 5 } });
    expect(none?.body.unable).toBeUndefined();
  });

  it("every candidate's queue full: 503 busy, Retry-After 2", () => {
    const full = 1 + MAX_QUEUE_PER_MODEL;
    expect(placed(placeRelay(start(), [session("s1"), session("s2")], loaded({ s1: full, s2: full - 1 })))).toBe("s2");
    expect(refused(placeRelay(start(), [session("s1"), session("s2")], loaded({ s1: full, s2: full })))?.body).toMatchObject({ status: 503, code: "no_capacity", retryAfter: 2, busy: true });
  });

  it("a chat turn goes where an engine holds its conversation; other endpoints do not look", () => {
    const q = new RelayQueue<Queued>();
    q.add({ id: "earlier", sessionId: "s2", model: M, state: "running", prompt: "turn1" });
    q.delete("earlier");
    const sessions = [session("s1", { capabilities: { completions: true } }), session("s2", { capabilities: { completions: true } })];
    expect(placed(placeRelay(start({ prompt: ["sys", "turn1", "turn2"] }), sessions, q))).toBe("s2");
    expect(placed(placeRelay(start({ endpoint: "completions", prompt: ["sys", "turn1", "turn2"] }), sessions, q))).toBe("s1");
  });
});

describe("refuseOversize", () => {
  it("a request message over MAX_MESSAGE_BYTES is refused with 413; one at the limit is not", () => {
    expect(refuseOversize("x".repeat(MAX_MESSAGE_BYTES))).toBeUndefined();
    expect(refuseOversize("x".repeat(MAX_MESSAGE_BYTES + 1))).toMatchObject({ status: 413, body: { status: 413, code: "request_too_large", retryable: true } });
    // UTF-8 bytes, not characters.
    expect(refuseOversize("é".repeat(MAX_MESSAGE_BYTES / 2 + 1))?.status).toBe(413);
  });
});

describe("moveTarget: where a waiting request goes when its session leaves or may no longer take it", () => {
  it("the least loaded other ready session that serves it and admits its key", () => {
    const r = { model: M, endpoint: "chat" as const, keyId: "key_alice" };
    const sessions = [
      session("from"),
      session("busy"),
      session("idle"),
      session("notReady", { ready: false }),
      session("forBob", { grant: { keyId: "k", serves: ["key_bob"] } }),
      session("embedder", { capabilities: { embeddingModels: [M] } }),
    ];
    expect(moveTarget(r, "from", sessions, loaded({ busy: 2, idle: 1, notReady: 0, forBob: 0, embedder: 0 }))).toBe("idle");
    expect(moveTarget(r, "from", [session("from")], loaded({}))).toBeUndefined();
  });
});

describe("placeRelay and moveTarget with sessions benched for saying the model is not loaded", () => {
  const benched = (until: Record<string, number>, now = 0) => ({ now, until: (id: string) => (until[id] !== undefined && until[id]! > now ? until[id] : undefined) });

  it("a benched session takes none of the model's requests; the others do, however loaded", () => {
    const sessions = [session("s1"), session("s2")];
    expect(placed(placeRelay(start(), sessions, loaded({ s1: 0, s2: 3 }), benched({ s1: 1000 })))).toBe("s2");
    expect(placed(placeRelay(start(), sessions, loaded({ s1: 0, s2: 3 }), benched({ s1: 1000 }, 1000)))).toBe("s1");
  });

  it("every candidate benched: 503 model_loading, Retry-After the earliest bench's end in whole seconds, and when that is", () => {
    const p = placeRelay(start(), [session("s1"), session("s2")], loaded({}), benched({ s1: 4000, s2: 1500 }, 100));
    expect(p).toMatchObject({ ok: false, loadingUntil: 1500, refusal: { status: 503, body: { status: 503, code: "model_loading", retryAfter: 2 } } });
    expect(refused(p)?.body.message).toContain("not loaded");
    // Benched sessions do not make a request for another model wait: no session serves it.
    expect(placeRelay(start({ model: "other" }), [session("s1")], loaded({}), benched({ s1: 4000 }))).toMatchObject({ ok: false, refusal: { body: { code: "no_capacity" } } });
    expect(placeRelay(start({ model: "other" }), [session("s1")], loaded({}), benched({ s1: 4000 }))).not.toHaveProperty("loadingUntil");
  });

  it("a waiting request does not move to a benched session", () => {
    const r = { model: M, endpoint: "chat" as const };
    expect(moveTarget(r, "from", [session("s1"), session("s2")], loaded({ s2: 2 }), benched({ s1: 1000 }))).toBe("s2");
    expect(moveTarget(r, "from", [session("s1")], loaded({}), benched({ s1: 1000 }))).toBeUndefined();
  });
});
