import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, keyedVars, parseSse, received } from "./harness.ts";

// Stored responses (store, previous_response_id, GET/DELETE /v1/responses/{id}, input_items) in the
// ResponseStore Durable Object, scoped per key (or per credential in open mode).

/**
 * A model served by the fixture upstream's `say` behaviour; each test says something of its own, so
 * the path (`/behave/say/<text>`) tells its requests apart.
 */
function sayModel(textOut: string) {
  const tag = `/behave/say/${encodeURIComponent(textOut)}/`;
  return { tag, vars: configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}${tag}` }] } }) };
}

async function bodiesFor(tag: string): Promise<Array<{ messages: Array<{ role: string; content: unknown }> }>> {
  return (await received()).filter((r) => r.path.includes(tag) && r.path.endsWith("/chat/completions")).map((r) => JSON.parse(r.body));
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function post(body: Record<string, unknown>, vars: Record<string, unknown>, headers: Record<string, string> = {}) {
  const { res, done } = await call("/v1/responses", { json: { model: "m", ...body }, headers }, vars);
  const text = await res.text();
  await done();
  return { status: res.status, body: (text.trim().startsWith("{") ? JSON.parse(text) : text) as any, raw: text };
}

async function get(path: string, vars: Record<string, unknown>, headers: Record<string, string> = {}, method = "GET") {
  const { res, done } = await call(path, { method, headers }, vars);
  const body = (await res.json()) as any;
  await done();
  return { status: res.status, body };
}

describe("stored responses", () => {
  it("store defaults to true: GET returns the same response, input_items lists the input with ids", async () => {
    const { vars } = sayModel("Stored answer.");
    const first = await post({ input: "Remember this.", instructions: "Be terse." }, vars);
    expect(first.status, first.raw).toBe(200);
    expect(first.body).toMatchObject({ store: true, previous_response_id: null, status: "completed" });

    const got = await get(`/v1/responses/${first.body.id}`, vars);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(first.body.id);
    expect(got.body.output).toEqual(first.body.output);
    expect(got.body.usage).toEqual(first.body.usage);

    const items = await get(`/v1/responses/${first.body.id}/input_items`, vars);
    expect(items.status).toBe(200);
    expect(items.body).toMatchObject({ object: "list", has_more: false });
    expect(items.body.data).toHaveLength(1);
    expect(items.body.data[0]).toMatchObject({ type: "message", role: "user", content: [{ type: "input_text", text: "Remember this." }] });
    expect(items.body.data[0].id).toMatch(/^msg_/);
    expect(items.body.first_id).toBe(items.body.data[0].id);
  });

  it("previous_response_id: the earlier turns reach the model in order, instructions are not carried over", async () => {
    const { tag, vars } = sayModel("Paris.");
    const first = await post({ input: "Capital of France?", instructions: "Answer in one word." }, vars);
    expect(first.status, first.raw).toBe(200);
    const second = await post({ input: "And its river?", previous_response_id: first.body.id }, vars);
    expect(second.status, second.raw).toBe(200);
    expect(second.body.previous_response_id).toBe(first.body.id);

    const third = await post({ input: [{ role: "user", content: "Thanks." }], previous_response_id: second.body.id, instructions: "Be kind." }, vars);
    expect(third.status, third.raw).toBe(200);

    const bodies = await bodiesFor(tag);
    expect(bodies).toHaveLength(3);
    expect(bodies[1]!.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Capital of France?"],
      ["assistant", "Paris."],
      ["user", "And its river?"],
    ]);
    expect(bodies[2]!.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "Be kind."],
      ["user", "Capital of France?"],
      ["assistant", "Paris."],
      ["user", "And its river?"],
      ["assistant", "Paris."],
      ["user", "Thanks."],
    ]);
  });

  it("a stream is stored before its last event: a chained request made on response.completed finds it", async () => {
    const { tag, vars } = sayModel("Streamed and stored.");
    const first = await post({ input: "Go.", stream: true }, vars);
    const events = parseSse(first.raw.replace(/^event: .*\n/gm, "")).frames;
    const completed = events.at(-1)!;
    expect(completed.type).toBe("response.completed");
    expect(completed.response.store).toBe(true);
    const second = await post({ input: "Again.", previous_response_id: completed.response.id }, vars);
    expect(second.status, second.raw).toBe(200);
    expect((await bodiesFor(tag))[1]!.messages.map((m) => m.content)).toEqual(["Go.", "Streamed and stored.", "Again."]);
  });

  it("store: false is never kept; an unknown previous_response_id is a 400 naming the field", async () => {
    const { vars } = sayModel("Not kept.");
    const first = await post({ input: "Hi.", store: false }, vars);
    expect(first.body.store).toBe(false);
    expect((await get(`/v1/responses/${first.body.id}`, vars)).status).toBe(404);
    const chained = await post({ input: "Hi again.", previous_response_id: first.body.id }, vars);
    expect(chained.status).toBe(400);
    expect(chained.body.error).toMatchObject({ code: "previous_response_not_found", param: "previous_response_id", type: "invalid_request_error" });
  });

  it("DELETE removes it: then GET, input_items and chaining all fail", async () => {
    const { vars } = sayModel("Soon gone.");
    const first = await post({ input: "Hi." }, vars);
    const deleted = await get(`/v1/responses/${first.body.id}`, vars, {}, "DELETE");
    expect(deleted).toEqual({ status: 200, body: { id: first.body.id, object: "response.deleted", deleted: true } });
    expect((await get(`/v1/responses/${first.body.id}`, vars)).status).toBe(404);
    expect((await get(`/v1/responses/${first.body.id}/input_items`, vars)).status).toBe(404);
    expect((await get(`/v1/responses/${first.body.id}`, vars, {}, "DELETE")).status).toBe(404);
    expect((await post({ input: "Again.", previous_response_id: first.body.id }, vars)).status).toBe(400);
  });

  it("item_reference input items are resolved from the caller's stored responses", async () => {
    const { tag, vars } = sayModel("Referenced.");
    const first = await post({ input: "Original question." }, vars);
    const items = await get(`/v1/responses/${first.body.id}/input_items`, vars);
    const refs = [{ type: "item_reference", id: items.body.data[0].id }, { type: "item_reference", id: first.body.output[0].id }, { role: "user", content: "Follow-up." }];
    const second = await post({ input: refs }, vars);
    expect(second.status, second.raw).toBe(200);
    expect((await bodiesFor(tag))[1]!.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Original question."],
      ["assistant", "Referenced."],
      ["user", "Follow-up."],
    ]);
    const missing = await post({ input: [{ type: "item_reference", id: "msg_nope" }] }, vars);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("item_not_found");
  });

  it("with team keys, another key can neither read, chain to nor delete a response", async () => {
    const { vars: model } = sayModel("Mine.");
    const vars = keyedVars(model);
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    const mine = await post({ input: "Secret plan." }, vars, auth(alice.key));
    expect(mine.status, mine.raw).toBe(200);
    const id = mine.body.id;
    expect((await get(`/v1/responses/${id}`, vars, auth(alice.key))).status).toBe(200);

    expect((await get(`/v1/responses/${id}`, vars, auth(bob.key))).status).toBe(404);
    expect((await get(`/v1/responses/${id}/input_items`, vars, auth(bob.key))).status).toBe(404);
    expect((await post({ input: "Tell me.", previous_response_id: id }, vars, auth(bob.key))).status).toBe(400);
    expect((await get(`/v1/responses/${id}`, vars, auth(bob.key), "DELETE")).status).toBe(404);
    expect((await get(`/v1/responses/${id}`, vars)).status).toBe(401);
    // Bob's failed delete left it in place.
    expect((await get(`/v1/responses/${id}`, vars, auth(alice.key))).status).toBe(200);
  });

  it("in open mode, responses are scoped per credential: another bearer token gets 404", async () => {
    const { vars } = sayModel("Per credential.");
    const mine = await post({ input: "Hi." }, vars, auth("sk-local-one"));
    expect((await get(`/v1/responses/${mine.body.id}`, vars, auth("sk-local-one"))).status).toBe(200);
    expect((await get(`/v1/responses/${mine.body.id}`, vars, auth("sk-local-two"))).status).toBe(404);
    expect((await get(`/v1/responses/${mine.body.id}`, vars)).status).toBe(404);
  });
});
