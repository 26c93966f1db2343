// The OpenAI-compatible upstreams' I/O edge against a stubbed fetch: the URL and headers sent, the
// answers read (a stream, one JSON body, an error with Retry-After), and that nothing else is asked.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { OpenAiTarget } from "../../../../src/config/config-schema.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import type { EventStreamReader } from "../../../../src/events/event-source.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { Deadlines } from "../../../../src/lib/deadlines.ts";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";
import { openaiAdapter } from "../../../../src/upstreams/openai/openai-adapter.ts";
import type { AttemptContext } from "../../../../src/upstreams/upstream.ts";

const SECRET = "sk-switchyard-test-key-0123";
const ctx = (): AttemptContext => ({ requestId: "req-1", signal: new AbortController().signal, responseStartMs: 5000, deadlines: new Deadlines(), env: { GPU_KEY: SECRET } });
const target = (extra: Partial<OpenAiTarget> = {}) => ({ kind: "openai" as const, url: "http://gpu-1:8000", name: "openai:gpu-1:8000", apiKeySecret: "GPU_KEY", headers: { "x-portkey-provider": "openai" }, ...extra });
const request = { model: "coder", messages: [{ role: "user", content: "hi" }] } as ChatRequest;

const sse = (frames: object[]) => frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("") + "data: [DONE]\n\n";
const answer = sse([{ choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] }, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }]);

function stubFetch(respond: (url: string, init: RequestInit) => Response) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    calls.push({ url, init: init ?? {} });
    return respond(url, init ?? {});
  });
  return calls;
}

async function all(r: EventStreamReader): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for (let x = await r.read(); !x.done; x = await r.read()) out.push(x.value);
  return out;
}

afterEach(() => vi.restoreAllMocks());

describe("OpenAiUpstream", () => {
  it.each(["http://gpu-1:8000", "http://gpu-1:8000/", "http://gpu-1:8000/v1", "http://gpu-1:8000/v1/"])("%s: POST /v1/chat/completions with the key, the extra headers and a streaming body", async (url) => {
    const calls = stubFetch(() => new Response(answer, { headers: { "content-type": "text/event-stream" } }));
    const events = await all(await openaiAdapter.chat(target({ url, model: "Qwen/Qwen3-8B" })).open(request, ctx()));
    expect(events).toEqual([
      { type: "text", delta: "Hi" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { promptTokens: 3, completionTokens: 1 } },
    ]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe("http://gpu-1:8000/v1/chat/completions");
    expect(calls[0]!.init.headers).toMatchObject({ authorization: `Bearer ${SECRET}`, "x-portkey-provider": "openai", accept: "text/event-stream", "content-type": "application/json" });
    expect(JSON.parse(calls[0]!.init.body as string)).toMatchObject({ model: "Qwen/Qwen3-8B", stream: true, stream_options: { include_usage: true } });
  });

  it("one JSON body although a stream was asked for (a buffering gateway): the same events", async () => {
    stubFetch(() => Response.json({ choices: [{ index: 0, message: { role: "assistant", content: "Hi", reasoning: "hm" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } }));
    expect(await all(await openaiAdapter.chat(target()).open(request, ctx()))).toEqual([
      { type: "reasoning", delta: "hm" },
      { type: "text", delta: "Hi" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { promptTokens: 3, completionTokens: 1 } },
    ]);
  });

  it("an HTML page: a retryable error that says to check the URL", async () => {
    stubFetch(() => new Response("<html>login</html>", { headers: { "content-type": "text/html" } }));
    await expect(openaiAdapter.chat(target()).open(request, ctx())).rejects.toMatchObject({ status: 502, retryable: true, message: expect.stringContaining("OpenAI-compatible server") });
  });

  it("a 429 with Retry-After: busy, the upstream's own wait and status attached for the router", async () => {
    stubFetch(() => Response.json({ error: { message: "slow down" } }, { status: 429, headers: { "retry-after": "3" } }));
    const err = await openaiAdapter.chat(target()).open(request, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProxyError);
    expect(err).toMatchObject({ code: "no_capacity", busy: true });
    expect((err as ProxyError).upstreamRetryAfterMs).toBe(3000);
    expect((err as ProxyError).upstreamStatus).toBe(429);
  });

  it("an upstream that quotes the key back has it redacted", async () => {
    stubFetch(() => Response.json({ error: { message: `bad header Bearer ${SECRET}` } }, { status: 400 }));
    const err = (await openaiAdapter.chat(target()).open(request, ctx()).catch((e: unknown) => e)) as ProxyError;
    expect(err.message).not.toContain(SECRET);
    expect(err.message).toContain("[redacted]");
  });

  it("a missing key secret: config_error naming it, nothing sent", async () => {
    const calls = stubFetch(() => new Response(answer));
    await expect(openaiAdapter.chat(target({ apiKeySecret: "NOPE" })).open(request, { ...ctx(), env: {} })).rejects.toMatchObject({ code: "config_error", message: expect.stringContaining("NOPE") });
    expect(calls).toHaveLength(0);
  });

  it("a refused connection: upstream_unreachable, retryable", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connect ECONNREFUSED 10.0.0.1:8000"));
    await expect(openaiAdapter.chat(target()).open(request, ctx())).rejects.toMatchObject({ code: "upstream_unreachable", retryable: true, message: expect.stringContaining("connection refused") });
  });
});

describe("completions and embeddings", () => {
  it("POST /v1/completions, its text chunks read as chat deltas", async () => {
    const calls = stubFetch(() => new Response(sse([{ choices: [{ index: 0, text: "Yo", finish_reason: "stop" }] }]), { headers: { "content-type": "text/event-stream" } }));
    const t = target({ model: "m-upstream" });
    const events = await all(await openaiAdapter.completions!(t, { model: "m", prompt: "x" }).open(request, ctx()));
    expect(events).toEqual([{ type: "text", delta: "Yo" }, { type: "finish", reason: "stop" }]);
    expect(calls[0]!.url).toBe("http://gpu-1:8000/v1/completions");
    expect(JSON.parse(calls[0]!.init.body as string)).toMatchObject({ model: "m-upstream", prompt: "x", stream: true, stream_options: { include_usage: true } });
  });

  it("POST /v1/embeddings: the list as the server wrote it", async () => {
    const list = { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model: "e", usage: { prompt_tokens: 1, total_tokens: 1 } };
    const calls = stubFetch(() => Response.json(list));
    expect(await openaiAdapter.embeddings!(target(), { model: "e", input: "x" }, ctx(), 5000)).toEqual(list);
    expect(calls[0]!.url).toBe("http://gpu-1:8000/v1/embeddings");
  });

  it("a server without embeddings (404): embeddings_not_supported, retryable elsewhere", async () => {
    stubFetch(() => new Response("Not Found", { status: 404 }));
    await expect(openaiAdapter.embeddings!(target(), { model: "e", input: "x" }, ctx(), 5000)).rejects.toMatchObject({ status: 400, code: "embeddings_not_supported", retryable: true });
  });

  it("Ollama's model not pulled stays a model error, not 'no embeddings'", async () => {
    stubFetch(() => Response.json({ error: { message: 'model "nomic" not found, try pulling it first', type: "not_found_error" } }, { status: 404 }));
    await expect(openaiAdapter.embeddings!(target(), { model: "e", input: "x" }, ctx(), 5000)).rejects.toMatchObject({ status: 502, message: expect.stringContaining("does not serve the model") });
  });
});
