// llama-server's chat parser refusing its own model's output ("The model produced output that does
// not match the expected <format> format"): the generation was fine, only the strict parse at its end
// failed. Before anything was sent, the same server is asked for the raw text (src/upstreams/llama/
// llama-raw-upstream.ts) and Switchyard's rewriter reads it; after text was sent, the same server
// continues the answer (src/routing/continuation/).
import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, HARMONY_URL, keyedVars, LLAMA_URL, grammar, readSse, received, text } from "./harness.ts";

const readFile = { type: "function", function: { name: "read_file", parameters: { type: "object", properties: { filepath: { type: "string" } }, required: ["filepath"] } } };
const ask = (extra: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "Read a.txt." }], tools: [readFile], temperature: 0, max_tokens: 10, ...extra });
// A `u-…` segment of its own per test: one health record and circuit each.
const harmonyFixture = (tag: string) => configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-${tag}/behave/harmony-unparsed` }] } });
const harmony = (extra: Record<string, unknown> = {}) => configWith({ m: { targets: [{ kind: "llama", url: HARMONY_URL }], ...extra } });

describe("a parse failure before anything was sent: the raw text, read by the rewriter", () => {
  it("stream: the harmony tool call llama-server refused arrives as tool_calls, with [DONE] and two attempts", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({ stream: true }) }, harmonyFixture(crypto.randomUUID()));
    expect(res.status).toBe(200);
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    expect(frames.some((f) => f.error)).toBe(false);
    const deltas = frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? []);
    expect(deltas[0].function.name).toBe("read_file");
    expect(JSON.parse(deltas.map((d: any) => d.function.arguments ?? "").join(""))).toEqual({ filepath: "a.txt" });
    expect(text(frames)).toBe("");
    expect(frames.find((f) => f.choices?.[0]?.finish_reason)!.choices[0].finish_reason).toBe("tool_calls");
    expect(frames.find((f) => f.x_switchyard)!.x_switchyard).toMatchObject({ attempts: 2, tool_calls: [{ index: 0, score: 1 }] });

    // What went upstream: the chat request, the prompt rendered with and without the generation
    // prompt, then a raw completion of it with the special tokens the rewriter reads kept as text.
    const sent = (await received()).filter((r) => r.path.startsWith("/behave/harmony-unparsed/")).slice(-4);
    expect(sent.map((r) => r.path.replace(/^.*harmony-unparsed/, ""))).toEqual(["/v1/chat/completions", "/apply-template", "/apply-template", "/v1/completions"]);
    const rendered = sent.filter((r) => r.path.endsWith("/apply-template")).map((r) => JSON.parse(r.body));
    expect(rendered.map((b) => b.add_generation_prompt).sort()).toEqual([false, undefined].sort());
    for (const b of rendered) expect(b).toMatchObject({ messages: ask({}).messages, tools: [readFile] });
    const raw = JSON.parse(sent.at(-1)!.body);
    expect(raw.prompt).toMatch(/<\|start\|>user<\|message\|>Read a\.txt\.<\|end\|><\|start\|>assistant$/);
    expect(raw.preserved_tokens).toEqual(expect.arrayContaining(["<|channel|>", "<|message|>", "<|constrain|>", "<|call|>", "<tool_call>", "<think>"]));
    expect(raw).toMatchObject({ stream: true, temperature: 0, max_tokens: 10 });
    for (const key of ["messages", "tools", "tool_choice"]) expect(raw).not.toHaveProperty(key);
  });

  it("non-stream (a 500 from the chat endpoint): the same call in the body, finish tool_calls", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask({}) }, harmonyFixture(crypto.randomUUID()));
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: "function", function: { name: "read_file", arguments: '{"filepath": "a.txt"}' } }]);
    expect(body.usage).toMatchObject({ prompt_tokens: 162, completion_tokens: 53 });
    expect(body.x_switchyard.attempts).toBe(2);
  });

  it("Anthropic /v1/messages: a tool_use block", async () => {
    const { res } = await call(
      "/v1/messages",
      { json: { model: "m", max_tokens: 10, messages: [{ role: "user", content: "Read a.txt." }], tools: [{ name: "read_file", input_schema: readFile.function.parameters }] } },
      harmonyFixture(crypto.randomUUID()),
    );
    const body = (await res.json()) as any;
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content.find((b: any) => b.type === "tool_use")).toMatchObject({ name: "read_file", input: { filepath: "a.txt" } });
  });

  it("the real llama-server: gpt-oss's template refuses text without harmony markup; Switchyard's answer is its raw text", async () => {
    const want = "Hello there";
    // The premise, straight from the server: a literal grammar makes the model write plain text,
    // which this template's parser refuses.
    const direct = await fetch(`${HARMONY_URL}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], grammar: grammar(want) }) });
    expect(direct.status).toBe(500);
    expect(((await direct.json()) as any).error.message).toMatch(/does not match the expected .* format/);

    for (const stream of [false, true]) {
      const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], grammar: grammar(want), stream } }, harmony());
      expect(res.status).toBe(200);
      if (stream) {
        const { frames, done } = await readSse(res);
        expect(done).toBe(true);
        expect(text(frames)).toBe(want);
        expect(frames.find((f) => f.choices?.[0]?.finish_reason)!.choices[0].finish_reason).toBe("stop");
      } else {
        const body = (await res.json()) as any;
        expect(body.choices[0].message.content).toBe(want);
        expect(body.choices[0].finish_reason).toBe("stop");
        expect(body.usage.completion_tokens).toBeGreaterThan(0);
        expect(body.x_switchyard.attempts).toBe(2);
      }
    }
  });

  it("the real llama-server: reasoning in the analysis channel, then text the parser refuses: the answer replayed, its reasoning not repeated", async () => {
    // llama-server streams the reasoning (its partial parse reads it) and then refuses the rest, so
    // the reasoning was sent before the failure: the raw replay's repeat of it is cut off.
    const out = "<|channel|>analysis<|message|>Let me think.<|end|>The answer.";
    const req = { model: "m", messages: [{ role: "user", content: "hi" }], grammar: grammar(out) };
    const { res } = await call("/v1/chat/completions", { json: req }, harmony());
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].message).toMatchObject({ content: "The answer.", reasoning_content: "Let me think." });
    expect(body.x_switchyard.resumes).toEqual([expect.objectContaining({ from: body.x_switchyard.target, to: body.x_switchyard.target, after_chars: 0 })]);

    const streamed = await call("/v1/chat/completions", { json: { ...req, stream: true } }, harmony());
    const { frames, done } = await readSse(streamed.res);
    expect(done).toBe(true);
    expect(frames.map((f) => f.choices?.[0]?.delta?.reasoning_content ?? "").join("")).toBe("Let me think.");
    expect(text(frames)).toBe("The answer.");
  });

  it("the real llama-server with tools: the random model's refused output still ends normally", async () => {
    const { res } = await call("/v1/chat/completions", { json: { ...ask({ stream: true }), max_tokens: 12 } }, harmony());
    const { frames, done } = await readSse(res);
    expect(frames.some((f) => f.error), JSON.stringify(frames.at(-1))).toBe(false);
    expect(done).toBe(true);
    expect(["stop", "length", "tool_calls"]).toContain(frames.find((f) => f.choices?.[0]?.finish_reason)!.choices[0].finish_reason);
  });
});

describe("the seed that makes a replay the same answer", () => {
  const lastChatBody = async () => JSON.parse((await received()).filter((r) => r.path.endsWith("/v1/chat/completions")).at(-1)!.body);
  it("a chat request without one gets one of its own; the client's is kept; a target's strip removes it", async () => {
    const target = (extra: Record<string, unknown> = {}) => configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/fixture/stream-plain-text`, ...extra }] } });
    const ask = (extra: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });
    await (await call("/v1/chat/completions", { json: ask({}) }, target())).res.text();
    const drawn = (await lastChatBody()).seed;
    expect(Number.isInteger(drawn) && drawn >= 0 && drawn < 2 ** 31).toBe(true);
    await (await call("/v1/chat/completions", { json: ask({ seed: 42 }) }, target())).res.text();
    expect((await lastChatBody()).seed).toBe(42);
    await (await call("/v1/chat/completions", { json: ask({}) }, target({ strip: ["seed"] }))).res.text();
    expect(await lastChatBody()).not.toHaveProperty("seed");
  });
});

describe("a parse failure after text was sent: the same server continues the answer", () => {
  it("the real llama-server, sampling freely: every answer ends normally, and the refused ones were continued by the same server", async () => {
    // A stray byte (a token that is half a UTF-8 sequence) makes llama-server's parser stop at it and
    // refuse the whole output at the end. The test model never writes one by itself
    // (scripts/gguf-writer.mjs); a logit bias on token 160, the byte 0xE4 that begins a three-byte
    // character, makes it write one now and then: about one answer of 8 tokens in three is refused.
    // One generation after a refusal is reserved per request: a continuation refused in turn ends
    // the answer with that refusal.
    const config = configWith({ m: { targets: [{ kind: "llama", url: LLAMA_URL }], resume: { maxResumes: 5 } } });
    // About 3 in 10 answers are refused and then continued: none of 40 would be one run in a million.
    const ANSWERS = 40;
    let resumed = 0;
    for (let i = 0; i < ANSWERS; i++) {
      const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "Say something." }], tools: [readFile], max_tokens: 8, stream: true, logit_bias: { "160": 2 } } }, config);
      const { frames, done } = await readSse(res);
      const error = frames.find((f) => f.error)?.error;
      if (error) {
        expect(error.message, JSON.stringify(error)).toMatch(/chat parser could not read/);
        continue;
      }
      expect(done).toBe(true);
      const ext = frames.find((f) => f.x_switchyard)?.x_switchyard;
      if (ext?.resumes?.length) {
        resumed++;
        for (const r of ext.resumes) expect(r.from).toBe(r.to);
      }
    }
    console.log(`chat-parser-refusal: ${resumed} of ${ANSWERS} answers refused by llama-server's parser and continued by the same server`);
    expect(resumed).toBeGreaterThan(0);
  }, 120_000);
});

/** llama-server's own count of the tokens it generated (`--metrics`), once no slot is busy (it counts finished tasks). */
async function generatedSoFar(url: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const slots = (await (await fetch(`${url}/slots`)).json()) as Array<{ is_processing: boolean }>;
    if (slots.every((s) => !s.is_processing)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(/^llamacpp:tokens_predicted_total (\S+)$/m.exec(metrics)![1]);
}

describe("a refused answer is charged what the server generated, every attempt included", () => {
  // This file's requests to the harmony server run one at a time, so its counter's delta is this request's.
  const charged = async (body: Record<string, unknown>, path = "/v1/chat/completions") => {
    const vars = keyedVars(harmony());
    const { key } = await createKey(vars, { name: `refused-${crypto.randomUUID().slice(0, 8)}`, scopes: ["chat"], limits: { tokensPerDay: 100_000 } });
    const headers = { authorization: `Bearer ${key}` };
    const before = await generatedSoFar(HARMONY_URL);
    const { res, done } = await call(path, { json: body, headers }, vars);
    const answer = await res.text();
    await done();
    const generated = (await generatedSoFar(HARMONY_URL)) - before;
    const usage = await call("/v1/usage", { headers }, vars);
    const totals = ((await usage.res.json()) as any).totals as { completion_tokens: number; requests: number };
    await usage.done();
    return { status: res.status, answer, generated, charged: totals.completion_tokens };
  };

  it("reasoning, then text the parser refuses, replayed raw: charged at least both generations (today: the replay's alone)", async () => {
    const out = "<|channel|>analysis<|message|>Let me think it over.<|end|>The answer.";
    // Room for all of it (~55 tokens): cut short, the answer would end in its reasoning.
    const MAX = 80;
    for (const stream of [false, true]) {
      const r = await charged({ model: "m", messages: [{ role: "user", content: "hi" }], grammar: grammar(out), max_tokens: MAX, stream });
      expect(r.status, r.answer).toBe(200);
      expect(r.answer).toContain('"resumes"');
      expect(r.generated).toBeGreaterThan(0);
      expect(r.charged, `stream ${stream}: generated ${r.generated}`).toBeGreaterThanOrEqual(r.generated);
      // The overcharge is the refused attempt's bound less what it generated, no more.
      expect(r.charged).toBeLessThanOrEqual(MAX + r.generated);
    }
  });

  it("plain text the parser refuses before anything was sent, answered from the raw text: charged at least both generations", async () => {
    const r = await charged({ model: "m", messages: [{ role: "user", content: "hi" }], grammar: grammar("Hello there, how are you today?"), max_tokens: 30 });
    expect(r.status, r.answer).toBe(200);
    expect(JSON.parse(r.answer).x_switchyard.attempts).toBe(2);
    expect(r.charged, `generated ${r.generated}`).toBeGreaterThanOrEqual(r.generated);
    expect(r.charged).toBeLessThanOrEqual(30 + r.generated);
  });

  it("the refused answer on a key without room for a second generation: refused before it runs, nothing generated", async () => {
    // max_tokens 40 reserves twice (the raw text may follow a refusal): a 60-token day cannot hold it.
    const vars = keyedVars(harmony());
    const { key } = await createKey(vars, { name: "tight", scopes: ["chat"], limits: { tokensPerDay: 60 } });
    const before = await generatedSoFar(HARMONY_URL);
    const { res, done } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], grammar: grammar("Hello there"), max_tokens: 40 }, headers: { authorization: `Bearer ${key}` } }, vars);
    const body = (await res.json()) as any;
    await done();
    expect(res.status, JSON.stringify(body)).toBe(429);
    expect(body.error.code).toBe("tokens_per_day_exceeded");
    expect((await generatedSoFar(HARMONY_URL)) - before).toBe(0);
  });
});
