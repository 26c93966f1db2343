import { describe, expect, it } from "vitest";
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

async function send(messages: Message[]) {
  const { res, done } = await call("/v1/chat/completions", { json: { model: "m", messages, stream: true } }, vars);
  expect(res.status).toBe(200);
  const { frames } = await readSse(res);
  await done();
  return frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
}

/** Which upstream (a or b) received each conversation's turns, in order. */
async function servedBy(): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const r of await received()) {
    const m = /^\/behave\/paced\/(15|16)\//.exec(r.path);
    if (!m || !r.body.includes(tag)) continue;
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
});
