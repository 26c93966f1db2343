import { describe, expect, it } from "vitest";
import { resetHealthCache } from "../../src/health/health-client.ts";
import { resetIsolateState } from "../../src/routing/isolate/isolate-state.ts";
import { FIXTURE_URL, call, configWith, readSse, received } from "./harness.ts";

// Placement (balance: "least-busy") inside workerd, against two fixture upstreams that each answer
// slowly enough (15 or 16 tokens, 20 ms apart) for requests to overlap. Which upstream got each turn
// is read from what the fixture received: the token count in its path names the upstream, the body
// the conversation (and this file's tag in the system prompt, the run).
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const A = `${FIXTURE_URL}/u-pa${tag}/behave/paced/15`;
const B = `${FIXTURE_URL}/u-pb${tag}/behave/paced/16`;
const vars = configWith({ m: { targets: [{ kind: "llama", url: A }, { kind: "llama", url: B }], balance: "least-busy" } });
const SYSTEM = { role: "system", content: `You are a coding agent (${tag}). ` + "Follow the repository's conventions. ".repeat(40) };

type Message = { role: string; content: string };
const first = (i: number): Message[] => [SYSTEM, { role: "user", content: `task ${i}: make the tests pass` }];

async function send(messages: Message[], with_ = vars) {
  const { res, done } = await call("/v1/chat/completions", { json: { model: "m", messages, stream: true } }, with_);
  expect(res.status).toBe(200);
  const { frames } = await readSse(res);
  await done();
  return frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
}

/** Which upstream (a or b) received each conversation's turns, in order. */
async function servedBy(run = tag): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const r of await received()) {
    const m = /^\/behave\/paced\/(15|16)\//.exec(r.path);
    if (!m || !r.body.includes(`(${run})`)) continue;
    const messages = JSON.parse(r.body).messages as Message[];
    const i = Number(/task (\d+)/.exec(messages[1]!.content)![1]);
    out.set(i, [...(out.get(i) ?? []), m[1] === "15" ? "a" : "b"]);
  }
  return out;
}

describe("placement across two llama-servers (least-busy)", () => {
  it("8 new conversations at once split 4/4; every later turn, sent all at once too, goes where its conversation lives", async () => {
    const conversations = Array.from({ length: 8 }, (_, i) => first(i));
    for (let turn = 1; turn <= 3; turn++) {
      const answers = await Promise.all(conversations.map((m) => send(m)));
      answers.forEach((a, i) => conversations[i]!.push({ role: "assistant", content: a }, { role: "user", content: `turn ${turn + 1}: go on` }));
    }
    const served = await servedBy();
    expect(served.size).toBe(8);
    const homes = [...served.values()].map((turns) => turns[0]);
    expect(homes.filter((h) => h === "a")).toHaveLength(4);
    for (const turns of served.values()) expect(new Set(turns).size, `turns went to ${turns.join(", ")}`).toBe(1);
  });

  it("an isolate that never saw a conversation places its next turn where another isolate put it (the hub's placement notes)", async () => {
    const run = `${tag}-x`;
    const A2 = `${FIXTURE_URL}/u-xa${tag}/behave/paced/15`;
    const B2 = `${FIXTURE_URL}/u-xb${tag}/behave/paced/16`;
    // Reports reach the hub at once and every request refreshes the snapshot in the background.
    const shared = configWith({ m: { targets: [{ kind: "llama", url: A2 }, { kind: "llama", url: B2 }], balance: "least-busy" } }, { health: { snapshotTtlMs: 0 } });
    const system = { role: "system", content: `You are a coding agent (${run}).` };
    const conversations: Message[][] = Array.from({ length: 6 }, (_, i) => [system, { role: "user", content: `task ${i}: refactor` }]);
    for (const m of conversations) m.push({ role: "assistant", content: await send(m, shared) }, { role: "user", content: "next" });
    // A fresh isolate: no ledger, no snapshot. One request brings the hub's snapshot (and its notes) in.
    resetIsolateState();
    resetHealthCache();
    await send([{ role: "user", content: "warm-up, not a conversation of this test" }], shared);
    await new Promise((r) => setTimeout(r, 200));
    for (const m of conversations) await send(m, shared);
    const served = await servedBy(run);
    expect(served.size).toBe(6);
    for (const turns of served.values()) expect(turns, `turns went to ${turns.join(", ")}`).toEqual([turns[0], turns[0]]);
  });
});

describe("placement's hold for a conversation's home (least-busy, one slot each)", () => {
  it("a turn whose home is full waits in line for home's slot rather than recompute its long prompt on the idle server", async () => {
    const run = `${tag}-h`;
    const HA = `${FIXTURE_URL}/u-ha${tag}/behave/paced/15`;
    const HB = `${FIXTURE_URL}/u-hb${tag}/behave/paced/16`;
    const held = configWith({ m: { targets: [{ kind: "llama", url: HA }, { kind: "llama", url: HB }], balance: "least-busy" } });
    // About 9,000 prompt tokens at the default estimate: recomputing them elsewhere takes seconds,
    // the answer holding home's one slot a third of a second.
    const system = { role: "system", content: `You are a coding agent (${run}). ` + "Read the whole repository before you change it. ".repeat(600) };
    const messages: Message[] = [system, { role: "user", content: "task 0: make the tests pass" }];
    messages.push({ role: "assistant", content: await send(messages, held) }, { role: "user", content: "turn 2: go on" });
    // The same turn twice at once: the first takes home's slot, the second finds it full.
    await Promise.all([send(messages, held), send(messages, held)]);
    const served = await servedBy(run);
    const turns = served.get(0)!;
    expect(turns).toHaveLength(3);
    expect(new Set(turns).size, `turns went to ${turns.join(", ")}`).toBe(1);
  });
});
