import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, readSse, received, text } from "./harness.ts";

// The minimum-score policy: a constrained retry on the same target, then the next target, then the
// best answer flagged. The fixture upstream "says" fixed texts, so each target's call is known.
const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
];
const say = (t: string) => ({ kind: "llama", url: `${FIXTURE_URL}/behave/say/${encodeURIComponent(t)}` });
const BAD = '<tool_call>{"name": "get_weather", "arguments": {"town": "Paris"}}</tool_call>';
const GOOD = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
const ask = (stream: boolean) => ({ model: "m", stream, messages: [{ role: "user", content: "weather?" }], tools });

describe("tool-call minimum score", () => {
  for (const stream of [false, true]) {
    it(`retries the same target constrained, then moves on to the next (${stream ? "stream" : "non-stream"})`, async () => {
      await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
      const cfg = configWith({ m: { targets: [say(BAD), say(GOOD)] } }, { toolCalls: { minScore: 0.9 } });
      const { res } = await call("/v1/chat/completions", { json: ask(stream) }, cfg);
      expect(res.status).toBe(200);
      let ext: any;
      let args: string;
      if (stream) {
        const { frames } = await readSse(res);
        const calls = frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? []);
        args = calls.map((c: any) => c.function.arguments).join("");
        ext = frames.find((f) => f.choices?.[0]?.finish_reason)!.x_switchyard;
      } else {
        const body = (await res.json()) as any;
        args = body.choices[0].message.tool_calls[0].function.arguments;
        ext = body.x_switchyard;
      }
      expect(JSON.parse(args)).toEqual({ city: "Paris" });
      expect(ext.attempts).toBe(3);
      expect(ext.policy).toBeUndefined();
      expect(ext.tool_calls[0].score).toBe(1);
      // The retry on the first target went out in prompt mode (tools in the prompt, a grammar).
      const chats = (await received()).filter((r) => r.path.endsWith("/chat/completions"));
      expect(chats).toHaveLength(3);
      const retry = JSON.parse(chats[1]!.body);
      expect(retry.tools).toBeUndefined();
      expect(retry.grammar).toContain("get_weather");
    });
  }

  it("delivers the best answer, flagged, when no target does better", async () => {
    const cfg = configWith({ m: { targets: [say(BAD)] } }, { toolCalls: { models: { m: { minScore: 0.9 } } } });
    const { res } = await call("/v1/chat/completions", { json: ask(false) }, cfg);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.tool_calls[0].function.name).toBe("get_weather");
    expect(body.x_switchyard.policy).toBe("below_min_score");
    expect(body.x_switchyard.attempts).toBe(2);
    expect(body.x_switchyard.tool_calls[0].score).toBeLessThan(0.9);
  });

  it("stream: text already sent is not retried; a low-scoring call is delivered and flagged", async () => {
    const cfg = configWith({ m: { targets: [say(`Checking now. ${BAD}`), say(GOOD)] } }, { toolCalls: { minScore: 0.9 } });
    const { res } = await call("/v1/chat/completions", { json: ask(true) }, cfg);
    const { frames } = await readSse(res);
    expect(text(frames).trim()).toBe("Checking now.");
    const ext = frames.find((f) => f.choices?.[0]?.finish_reason)!.x_switchyard;
    expect(ext.attempts).toBe(1);
    expect(ext.policy).toBe("below_min_score");
  });
});

describe("tool-call retries and usage", () => {
  it("answers the policy generated and dropped count toward the key's usage", async () => {
    const { createKey, keyedVars } = await import("./harness.ts");
    const models = configWith({ m: { targets: [say(BAD), say(GOOD)] } }, { toolCalls: { minScore: 0.9 } });
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "agent", scopes: ["chat"] });
    const r = await call("/v1/chat/completions", { json: ask(false), headers: { authorization: `Bearer ${key.key}` } }, vars);
    expect(((await r.res.json()) as any).x_switchyard.attempts).toBe(3);
    await r.done();
    const usage = await call("/v1/usage", { headers: { authorization: `Bearer ${key.key}` } }, vars);
    const u = (await usage.res.json()) as any;
    await usage.done();
    // Each fixture answer reports 3 prompt + 5 completion tokens: three answers were generated.
    expect(u.totals).toMatchObject({ requests: 1, prompt_tokens: 9, completion_tokens: 15 });
  });
});

describe("tool-call minimum score: when every target fails", () => {
  it("the answer follows the shared precedence, whatever the order: capacity over an unreachable server", async () => {
    const dead = { kind: "llama", url: "http://127.0.0.1:9" };
    const browser = { kind: "browser", model: `None-${crypto.randomUUID().slice(0, 8)}-q4f32_1-MLC` };
    for (const targets of [[dead, browser], [browser, dead]]) {
      const cfg = configWith({ m: { targets } }, { toolCalls: { minScore: 0.9 }, retries: { perTarget: 1 } });
      const { res } = await call("/v1/chat/completions", { json: ask(false) }, cfg);
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(503);
      expect(body.error.code).toBe("no_capacity");
      expect(res.headers.get("retry-after")).not.toBeNull();
      expect(res.headers.get("x-switchyard-outcomes")).toMatch(/upstream_unreachable/);
      expect(res.headers.get("x-switchyard-outcomes")).toMatch(/no_capacity/);
    }
  });
});
