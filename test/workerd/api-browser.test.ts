import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call, configWith } from "./harness.ts";

// /v1/responses and /v1/messages served by a browser session (the fake web-llm page): the same
// internal events, so the same wire formats as with llama.cpp targets.
const TOKEN = "serve-secret-for-api-tests";
const uniqueModel = () => `Fake-api-${Math.random().toString(36).slice(2, 8)}-q4f32_1-MLC`;
const browserOnly = (model: string) => ({ ...configWith({ m: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 3000, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN });

async function serving(model: string) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  const s = new FakeSession(res.webSocket!);
  await s.hello([model]);
  return s;
}

describe("API surfaces on a browser session", () => {
  it("/v1/responses non-stream: the session's text as a message item", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const { res } = await call("/v1/responses", { json: { model: "m", input: "echo: Hello from a tab." } }, browserOnly(model));
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "m" });
    expect(body.output[0].content[0].text).toBe("Hello from a tab.");
    s.ws.close();
  });

  it("/v1/messages stream: Anthropic events with the session's text", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const { res } = await call("/v1/messages", { json: { model: "m", max_tokens: 100, stream: true, messages: [{ role: "user", content: "echo: Tab streams." }] } }, browserOnly(model));
    const raw = await res.text();
    const events = raw.split("\n\n").filter((b) => b.startsWith("event:")).map((b) => JSON.parse(/^data: (.*)$/m.exec(b)![1]!));
    expect(events[0].type).toBe("message_start");
    expect(events.at(-1).type).toBe("message_stop");
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe("Tab streams.");
    s.ws.close();
  });

  it("/v1/embeddings and /v1/completions skip browser targets: 503 no_capacity", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const emb = await call("/v1/embeddings", { json: { model: "m", input: "x" } }, browserOnly(model));
    expect(emb.res.status).toBe(503);
    expect(((await emb.res.json()) as any).error.code).toBe("no_capacity");
    const cmp = await call("/v1/completions", { json: { model: "m", prompt: "x" } }, browserOnly(model));
    expect(cmp.res.status).toBe(503);
    expect(((await cmp.res.json()) as any).error.code).toBe("no_capacity");
    s.ws.close();
  });
});
