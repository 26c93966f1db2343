// The policies of docs/tool-calls.md ("Policies"), one fixture each, one-shot and streamed: calls
// inside reasoning, calls cut off, text around calls, echoes, markers followed by non-calls, and
// the openings a prompt leaves to the output (no header, no opening tag, no opening think).

import { describe, expect, it } from "vitest";
import { ToolCallEvents, type RewriteOptions, type RewriteRequest } from "./imports.ts";
import { TOOLS } from "./fixtures.ts";
import { randomSplits, rewriteToolCalls, streamChunks } from "./helpers.ts";

interface Seen {
  content: string | null;
  reasoning: string;
  calls: Array<[string, unknown]>;
  problems: string[][];
}

function oneShot(text: string, options: Omit<RewriteRequest, "tools" | "text"> = {}): Seen {
  const r = rewriteToolCalls({ tools: TOOLS, text, ...options });
  return {
    content: r.content,
    reasoning: r.reasoning_content ?? "",
    calls: r.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    problems: r.tool_calls.map((c) => c.problems.map((p) => p.code)),
  };
}

/** The stream must give what the one-shot rewrite gives, however the text is split. */
function both(text: string, options: RewriteOptions = {}): Seen {
  const expected = oneShot(text, options);
  for (const chunks of [[...text], [text], ...[1, 2, 3, 4, 5].map((seed) => randomSplits(text, seed))]) {
    const s = streamChunks(TOOLS, chunks, options);
    expect({
      content: s.content,
      reasoning: s.reasoning,
      calls: s.calls.map(([n, a]) => [n, JSON.parse(a)]),
      problems: s.scored.map((c) => c.problems.map((p) => p.code)),
    }).toEqual(expected);
  }
  return expected;
}

const WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}';

describe("calls inside reasoning", () => {
  it("a block that closes after them: they were drafts, all reasoning", () => {
    const r = both(`<think>I could write <tool_call>${WEATHER}</tool_call> but no.</think>It is sunny.`);
    expect(r.calls).toEqual([]);
    expect(r.reasoning).toBe(`I could write <tool_call>${WEATHER}</tool_call> but no.`);
    expect(r.content).toBe("It is sunny.");
  });

  it("a block that never closes: the reasoning ended at the first call marker (Kimi-K2-Thinking)", () => {
    const r = both(
      "<think>I need the weather<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" +
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    );
    expect(r.reasoning).toBe("I need the weather");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.content).toBeNull();
  });

  it("a block the prompt opened and the output never closes (Qwen3.5 after <think>\\n)", () => {
    const r = both(`Need the weather.\n<tool_call>\n${WEATHER}\n</tool_call>`, { generationPrompt: "<|im_start|>assistant\n<think>\n" });
    expect(r.reasoning).toBe("Need the weather.");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
  });

  it("the text after the marker is held only while the block may still close", () => {
    const rw = new ToolCallEvents(TOOLS);
    const first = rw.push({ type: "text", delta: "<think>plan <tool_call>" + WEATHER });
    expect(first).toEqual([{ type: "reasoning", delta: "plan" }]);
    const closed = rw.push({ type: "text", delta: "</tool_call> no</think>Done." });
    expect(closed.filter((e) => e.type === "reasoning").map((e) => (e as { delta: string }).delta).join("")).toContain("<tool_call>");
  });
});

describe("a call cut off before its end", () => {
  const cut = '<tool_call>{"name": "get_weather", "arguments": {"city": "Par';

  it("the model stopped (finish stop): what is open is closed, reported as truncated", () => {
    const r = both(cut);
    expect(r.calls).toEqual([["get_weather", { city: "Par" }]]);
    expect(r.problems).toEqual([["truncated"]]);
  });

  it("max_tokens cut it (finish length): not a call; its text stays content", () => {
    const r = oneShot(cut, { finish_reason: "length" });
    expect(r.calls).toEqual([]);
    expect(r.content).toBe(cut);
  });

  it("in the chat path: finish length, or a stream that ends without a finish, delivers no call", () => {
    for (const end of ["length", "none"] as const) {
      const stage = new ToolCallEvents(TOOLS);
      const out = [...stage.push({ type: "text", delta: `Checking. ${cut}` })];
      out.push(...(end === "length" ? stage.push({ type: "finish", reason: "length" }) : stage.end()));
      expect(out.some((e) => e.type === "toolCall")).toBe(false);
      expect(out.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("")).toBe(`Checking. ${cut}`);
      if (end === "length") expect(out.at(-1)).toEqual({ type: "finish", reason: "length" });
    }
  });

  it("complete calls before the cut one are still calls", () => {
    const r = oneShot(`<tool_call>${WEATHER}</tool_call>\n${cut}`, { finish_reason: "length" });
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.content).toBe(cut);
  });

  it("a complete call whose closing tag never came is a call (missing_closing_tag)", () => {
    const r = oneShot(`<tool_call>${WEATHER}`, { finish_reason: "length" });
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.problems).toEqual([["missing_closing_tag"]]);
  });
});

describe("text before, between and after calls", () => {
  it("is content, in order: the whitespace before a call goes with it, the line break after it stays", () => {
    const r = both(`Let me check.\n<tool_call>${WEATHER}</tool_call>\nAnd the time:\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>\nBack soon.`);
    expect(r.calls.map(([n]) => n)).toEqual(["get_weather", "get_time"]);
    expect(r.content).toBe("Let me check.\nAnd the time:\nBack soon.");
  });
});

describe("echoes and duplicates", () => {
  it("the same call written again bare right after its block is an echo, dropped (LFM2)", () => {
    const r = both("<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>[get_weather(city='Paris')]");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.problems).toEqual([["echo_dropped"]]);
    expect(r.content).toBeNull();
  });

  it("a different call after it is a second call", () => {
    const r = both("<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>[get_weather(city='Rome')]");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }], ["get_weather", { city: "Rome" }]]);
  });

  it("the same call twice in one list is two calls (two random numbers, two identical lookups)", () => {
    const r = both(`<|python_tag|>${'{"name": "get_weather", "parameters": {"city": "Paris"}}'}; ${'{"name": "get_weather", "parameters": {"city": "Paris"}}'}`);
    expect(r.calls).toHaveLength(2);
  });

  it("two explicit blocks with the same call are two calls: the model asked twice", () => {
    const r = both(`<tool_call>${WEATHER}</tool_call><tool_call>${WEATHER}</tool_call>`);
    expect(r.calls).toHaveLength(2);
  });
});

describe("a marker followed by something that is not a call", () => {
  it("a special token is dropped and the text after it is content (Mistral)", () => {
    const r = both("[TOOL_CALLS] I cannot call a tool for that.");
    expect(r.calls).toEqual([]);
    expect(r.content).toBe("I cannot call a tool for that.");
  });

  it("a tag stays text (it may be the model talking about the format)", () => {
    const r = both("Wrap calls in <tool_call>…</tool_call> tags.");
    expect(r.content).toBe("Wrap calls in <tool_call>…</tool_call> tags.");
  });

  it("a stray closing special token is dropped wherever it is", () => {
    expect(both("Nothing to call.<|tool_call_end|>").content).toBe("Nothing to call.");
  });
});

describe("openings the prompt leaves to the output", () => {
  it("gpt-oss: the rest of the header after the prompt's <|start|>assistant", () => {
    for (const channel of ["commentary", "analysis"]) {
      const r = both(` to=functions.get_weather<|channel|>${channel} <|constrain|>json<|message|>{"city": "Paris"}<|call|>`);
      expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
      expect(r.content).toBeNull();
    }
  });

  it("gpt-oss: a message to a tool Switchyard does not serve is dropped, not content", () => {
    const r = both("<|channel|>analysis<|message|>Run it.<|end|><|start|>assistant to=container.exec<|channel|>commentary<|message|>ls -la<|call|>");
    expect(r).toMatchObject({ content: null, reasoning: "Run it.", calls: [] });
  });

  it("Qwen3-Coder without its opening <tool_call>: the call, and no stray </tool_call>", () => {
    const r = both("Let me look.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.content).toBe("Let me look.");
  });

  it("Command A: reasoning closed without its opening tag (a complete text shows it)", () => {
    const r = oneShot(
      'The user wants the weather.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>',
    );
    expect(r).toMatchObject({ content: null, reasoning: "The user wants the weather.", calls: [["get_weather", { city: "Paris" }]] });
  });

  it("an end-of-message token is not a reasoning close: Phi-3's answer<|end|> stays the answer", () => {
    expect(oneShot("Hello!<|end|>")).toMatchObject({ content: "Hello!", reasoning: "" });
  });

  it("a stream is told by the generation prompt, and then agrees with the one-shot", () => {
    const text = "Planning.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}";
    const r = both(text, { generationPrompt: "[THINK]" });
    expect(r).toMatchObject({ reasoning: "Planning.", content: null, calls: [["get_weather", { city: "Paris" }]] });
  });

  it("Functionary v3.2 after the prompt's >>>: the recipient line", () => {
    expect(both("all\nHello!", { generationPrompt: "<|start_header_id|>assistant<|end_header_id|>\n\n>>>" }).content).toBe("Hello!");
    const r = both('get_weather\n{"city": "Paris"}', { generationPrompt: ">>>" });
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
  });

  it("a prefilled answer keeps the whitespace its continuation starts with", () => {
    expect(both(" world", { continuation: true }).content).toBe(" world");
    expect(both(" world").content).toBe("world");
  });

  it("reasoning_format none keeps the reasoning inline, markers and all, and still reads no call inside", () => {
    const r = both(`<think>maybe <tool_call>${WEATHER}</tool_call></think>Sunny.`, { reasoningFormat: "none" });
    expect(r).toMatchObject({ reasoning: "", calls: [] });
    expect(r.content).toBe(`<think>maybe <tool_call>${WEATHER}</tool_call></think>Sunny.`);
  });

  it("a JSON answer in a fence loses the fence when the request asked for JSON", () => {
    expect(both('```json\n{"a": 1}\n```', { jsonResponse: true }).content).toBe('{"a": 1}');
    expect(both('```json\n{"a": 1}\n```').content).toBe('```json\n{"a": 1}\n```');
  });
});
