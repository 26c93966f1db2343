import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, fixtureModel, grammar, LLAMA_URL, readSse, received, text } from "./harness.ts";

// Tool calls written as text, turned into real tool_calls, against the real llama-server in prompt
// mode: a literal grammar (the client's own constraint wins over the proxy's) makes the random model
// emit each dialect token by token.
const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] },
    },
  },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { tz: { type: "string" } }, required: ["tz"] } } },
];
const prompt = configWith({ m: { targets: [{ kind: "llama", url: LLAMA_URL, tools: "prompt" }] } });
const ask = (literal: string, extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools,
  temperature: 0,
  max_tokens: 300,
  grammar: grammar(literal),
  ...extra,
});

const DIALECTS: Array<[string, string, string?]> = [
  ["hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'],
  ["llama3 json", '{"name": "get_weather", "parameters": {"city": "Paris"}}'],
  ["python_tag", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'],
  ["function tag", '<function=get_weather>{"city": "Paris"}</function>'],
  ["mistral array", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]'],
  ["mistral args", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'],
  ["pythonic", '[get_weather(city="Paris")]'],
  ["code fence", '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'],
  ["localai", '{"function": "get_weather", "arguments": {"city": "Paris"}}'],
  ["openai string arguments", '{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}'],
  ["tool_call wrapper", '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'],
  ["qwen3 xml", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"],
  ["after prose", 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>', "Let me check."],
  ["after think", '<think>The user wants weather.</think>\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'],
  ["broken json", '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris",}}</tool_call>'],
  // Formats from llama.cpp's own parser cases (docs/tool-calls.md, "Checked against llama.cpp's own cases").
  ["qwen3-coder without its opening tag", "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"],
  ["deepseek v3.2 dsml", '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'],
  ["gpt-oss header after the prompt's <|start|>assistant", ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}<|call|>'],
  ["call inside reasoning that never closes", '<think>I need the weather<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'],
];

describe.each(DIALECTS)("%s", (_name, literal, prose) => {
  it("non-stream: executable tool_calls with a score", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask(literal) }, prompt);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const tc = choice.message.tool_calls[0];
    expect(tc.id).toMatch(/^call_/);
    expect(tc.function.name).toBe("get_weather");
    expect(JSON.parse(tc.function.arguments)).toEqual({ city: "Paris" });
    if (prose) expect(choice.message.content?.trim()).toBe(prose);
    else expect(choice.message.content ?? "").not.toContain("get_weather");
    const score = body.x_switchyard.tool_calls[0];
    expect(score).toMatchObject({ index: 0, id: tc.id });
    expect(score.score).toBeGreaterThan(0.5);
  });

  it("stream: name first, then arguments, finish tool_calls", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask(literal, { stream: true }) }, prompt);
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    const calls = frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0].function.name).toBe("get_weather");
    expect(calls[0].id).toMatch(/^call_/);
    expect(JSON.parse(calls.map((c: any) => c.function.arguments ?? "").join(""))).toEqual({ city: "Paris" });
    const finishFrame = frames.find((f) => f.choices?.[0]?.finish_reason);
    expect(finishFrame!.choices[0].finish_reason).toBe("tool_calls");
    expect(finishFrame!.x_switchyard.tool_calls[0].id).toBe(calls[0].id);
    if (prose) expect(text(frames).trim()).toBe(prose);
  });
});

describe("tool calls in the chat path", () => {
  it("plain text with tools declared is still text", async () => {
    const { res } = await call("/v1/chat/completions", { json: ask("It is sunny in Paris today.") }, prompt);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.content).toBe("It is sunny in Paris today.");
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.choices[0].message.tool_calls).toBeUndefined();
  });

  it("prose that merely mentions a function is not a call", async () => {
    const literal = 'I could call get_weather with {"city": "Paris"} but I already know: it is sunny.';
    const { res } = await call("/v1/chat/completions", { json: ask(literal) }, prompt);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.tool_calls).toBeUndefined();
    expect(body.choices[0].message.content).toBe(literal);
  });

  it("a call that max_tokens cut off is not delivered: its text stays content, finish_reason length", async () => {
    const literal = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris, on the river Seine, in the north of France"}}</tool_call>';
    for (const stream of [false, true]) {
      // 32 tokens: past the function's name and far from the end, whichever pieces the model picks.
      const { res } = await call("/v1/chat/completions", { json: ask(literal, { max_tokens: 32, stream }) }, prompt);
      if (!stream) {
        const body = (await res.json()) as any;
        expect(body.choices[0].finish_reason).toBe("length");
        expect(body.choices[0].message.tool_calls).toBeUndefined();
        expect(literal.startsWith(body.choices[0].message.content)).toBe(true);
        expect(body.choices[0].message.content).toContain('<tool_call>{"name": "get_weather"');
      } else {
        const { frames } = await readSse(res);
        expect(frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? [])).toEqual([]);
        expect(frames.find((f) => f.choices?.[0]?.finish_reason)!.choices[0].finish_reason).toBe("length");
        expect(text(frames)).toContain('<tool_call>{"name": "get_weather"');
      }
    }
  });

  it("two calls in one reply", async () => {
    const literal = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>';
    const { res } = await call("/v1/chat/completions", { json: ask(literal) }, prompt);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.tool_calls.map((t: any) => t.function.name)).toEqual(["get_weather", "get_time"]);
    expect(new Set(body.choices[0].message.tool_calls.map((t: any) => t.id)).size).toBe(2);
  });

  it("tool_choice none leaves markup as text", async () => {
    const literal = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
    const { res } = await call("/v1/chat/completions", { json: ask(literal, { tool_choice: "none" }) }, prompt);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.content).toBe(literal);
  });

  it("an invalid call scores lower than a valid one", async () => {
    const good = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}</tool_call>';
    const bad = '<tool_call>{"name": "get_weather", "arguments": {"unit": "kelvin"}}</tool_call>';
    const score = async (literal: string) => (((await (await call("/v1/chat/completions", { json: ask(literal) }, prompt)).res.json()) as any).x_switchyard.tool_calls[0]);
    const [g, b] = [await score(good), await score(bad)];
    expect(g.score).toBe(1);
    expect(b.score).toBeLessThan(g.score);
    expect(b.problems.map((p: any) => p.code)).toEqual(expect.arrayContaining(["missing_required", "enum_mismatch"]));
  });

  it("in prompt mode the tools leave the upstream body and are described in the system prompt", async () => {
    // A grammar-free request goes out with the proxy's own grammar; check what llama-server received
    // through the fixture upstream, which records bodies.
    await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
    const cfg = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/paced/2`, tools: "prompt" }] } });
    const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], tools } }, cfg);
    await res.text();
    // (Admission may first read the server's slot count from /props.)
    const req = (await received()).find((r) => r.path.endsWith("/chat/completions"));
    const sent = JSON.parse(req!.body);
    expect(sent.tools).toBeUndefined();
    expect(sent.tool_choice).toBeUndefined();
    expect(sent.messages[0].role).toBe("system");
    expect(sent.messages[0].content).toContain("get_weather");
    expect(sent.grammar).toContain("get_weather");
  });

  it("prompt mode is the default for a server whose template cannot call tools (/props), native otherwise", async () => {
    const sent = async (path: string) => {
      await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
      const cfg = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/${path}` }] } });
      await (await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], tools } }, cfg)).res.text();
      const reqs = await received();
      return JSON.parse(reqs.find((r) => r.path.endsWith("/chat/completions"))!.body);
    };
    const prompt = await sent("behave/no-tool-template/2");
    expect(prompt.tools).toBeUndefined();
    expect(prompt.grammar).toContain("get_weather");
    const native = await sent("behave/paced/2");
    expect(native.tools).toHaveLength(2);
    expect(native.grammar).toBeUndefined();
  });

  it("plain text is not held back: the first content frame arrives while the upstream is still streaming", async () => {
    // 20 tokens 20 ms apart; with tools declared, the first word must not wait for the end.
    const { res } = await call("/v1/chat/completions", { json: { model: "m", stream: true, messages: [{ role: "user", content: "hi" }], tools } }, fixtureModel("behave/paced/20"));
    const reader = res.body!.getReader();
    const started = Date.now();
    const dec = new TextDecoder();
    let firstContentAt = 0;
    let raw = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += dec.decode(value);
      if (!firstContentAt && /"content":"tok/.test(raw)) firstContentAt = Date.now() - started;
    }
    const total = Date.now() - started;
    expect(firstContentAt).toBeGreaterThan(0);
    expect(firstContentAt).toBeLessThan(total - 200);
  });
});
