import { describe, expect, it } from "vitest";
import { FIXTURE_URL, call, configWith, createKey, keyedVars, received } from "./harness.ts";

// Sealed tokens (a reasoning item's encrypted_content, a compaction item) are bound to the key that
// got them: handed back by another key they are dropped like a forged token; the same key still opens them.

// Found by the id the test sent, which Switchyard passes upstream as x-client-request-id.
const sentFor = async (requestId: string) => JSON.parse((await received()).filter((r) => r.headers["x-client-request-id"] === requestId).at(-1)!.body);
const tagged = (key: string, name: string) => ({ authorization: `Bearer ${key}`, "x-request-id": `${name}-${crypto.randomUUID()}` });
const ask = (extra: Record<string, unknown>) => ({ model: "m", input: "Greet me.", store: false, include: ["reasoning.encrypted_content"], ...extra });

async function team(path: string) {
  const vars = keyedVars(configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/${path}` }] } }));
  const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
  const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
  return { vars, alice, bob };
}

describe("sealed tokens are bound to the key that got them", () => {
  it("a reasoning item's encrypted_content from key A opens for A and is dropped for key B", async () => {
    const { vars, alice, bob } = await team("fixture/stream-reasoning-content");
    const first = await call("/v1/responses", { json: ask({}), headers: { authorization: `Bearer ${alice.key}` } }, vars);
    const body = (await first.res.json()) as any;
    expect(first.res.status, JSON.stringify(body)).toBe(200);
    const [reasoning, message] = body.output;
    expect(reasoning.encrypted_content).toMatch(/^sy1\./);
    const input = [{ role: "user", content: "Greet me." }, { ...reasoning, content: undefined }, message, { role: "user", content: "Again." }];

    const asAlice = tagged(alice.key, "alice");
    const again = await call("/v1/responses", { json: ask({ input }), headers: asAlice }, vars);
    expect(again.res.status).toBe(200);
    await again.res.text();
    expect((await sentFor(asAlice["x-request-id"])).messages[1]).toMatchObject({ role: "assistant", content: "Hello!", reasoning_content: "The user wants a greeting." });

    const asBob = tagged(bob.key, "bob");
    const replay = await call("/v1/responses", { json: ask({ input }), headers: asBob }, vars);
    expect(replay.res.status).toBe(200);
    await replay.res.text();
    const sent = (await sentFor(asBob["x-request-id"])).messages[1];
    expect(sent).toMatchObject({ role: "assistant", content: "Hello!" });
    expect(JSON.stringify(sent)).not.toContain("The user wants a greeting.");
  });

  it("a compaction item from key A reaches the model for A, not for key B", async () => {
    const SUMMARY = "Alice's private summary.";
    const { vars, alice, bob } = await team(`behave/say/${encodeURIComponent(SUMMARY)}`);
    const compacted = await call("/v1/responses/compact", { json: { model: "m", input: [{ role: "user", content: "Write secret.txt" }] }, headers: { authorization: `Bearer ${alice.key}` } }, vars);
    const out = ((await compacted.res.json()) as any).output;
    expect(out.map((i: any) => i.type)).toEqual(["message", "compaction"]);
    const next = (key: string, name: string) => {
      const headers = tagged(key, name);
      return call("/v1/responses", { json: { model: "m", store: false, input: [out[1], { role: "user", content: "Go on." }] }, headers }, vars).then(async ({ res }) => {
        expect(res.status).toBe(200);
        await res.text();
        return (await sentFor(headers["x-request-id"])).messages.map((m: any) => m.content).join("\n");
      });
    };
    expect(await next(alice.key, "alice")).toContain(SUMMARY);
    expect(await next(bob.key, "bob")).not.toContain(SUMMARY);
  });
});
