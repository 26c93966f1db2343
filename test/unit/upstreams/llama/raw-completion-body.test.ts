import { describe, expect, it } from "vitest";
import { rawCompletionBody } from "../../../../src/upstreams/llama/raw-completion-body.ts";
import { OUTPUT_MARKERS } from "../../../../src/toolcalls/index.ts";

const chat = {
  model: "qwen",
  messages: [{ role: "user", content: "hi" }],
  tools: [{ type: "function", function: { name: "f" } }],
  tool_choice: "auto",
  parallel_tool_calls: true,
  chat_template_kwargs: { enable_thinking: true },
  reasoning_format: "auto",
  stream: false,
  stream_options: { include_usage: true },
  temperature: 0.2,
  top_p: 0.9,
  max_tokens: 50,
  seed: 7,
  stop: ["END"],
  grammar: "root ::= \"x\"",
};

describe("rawCompletionBody", () => {
  it("keeps sampling and llama.cpp's fields, drops what only the chat endpoint reads, streams with usage", () => {
    const prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
    const { messages, tools, tool_choice, parallel_tool_calls, chat_template_kwargs, reasoning_format, stream, stream_options, ...sampling } = chat;
    expect(rawCompletionBody(chat, prompt, ["<tool_call>"])).toEqual({ ...sampling, prompt, preserved_tokens: ["<tool_call>"], stream: true, stream_options: { include_usage: true } });
    expect(Object.keys(sampling).sort()).toEqual(["grammar", "max_tokens", "model", "seed", "stop", "temperature", "top_p"]);
  });
  it("response_format becomes json_schema as the chat endpoint reads it; an explicit json_schema wins", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    expect(rawCompletionBody({ response_format: { type: "json_schema", json_schema: { name: "x", schema } } }, "p", []).json_schema).toEqual(schema);
    expect(rawCompletionBody({ response_format: { type: "json_object" } }, "p", []).json_schema).toEqual({});
    expect(rawCompletionBody({ response_format: { type: "text" } }, "p", [])).not.toHaveProperty("json_schema");
    expect(rawCompletionBody({ response_format: { type: "json_object" }, json_schema: { const: 1 } }, "p", []).json_schema).toEqual({ const: 1 });
  });
  it("logprobs: true with top_logprobs N becomes logprobs N (at least 1: the tokens' own entries)", () => {
    expect(rawCompletionBody({ logprobs: true, top_logprobs: 3 }, "p", []).logprobs).toBe(3);
    expect(rawCompletionBody({ logprobs: true }, "p", []).logprobs).toBe(1);
    expect(rawCompletionBody({ logprobs: false }, "p", [])).not.toHaveProperty("logprobs");
  });
});

describe("OUTPUT_MARKERS", () => {
  it("holds the markers the rewriter reads and the special tokens inside compound ones, each once", () => {
    for (const m of ["<tool_call>", "</tool_call>", "<think>", "</think>", "[TOOL_CALLS]", "<|python_tag|>", "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", "<|call|>", "<|end|>", "<|tool_call_begin|>", "<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>"]) {
      expect(OUTPUT_MARKERS).toContain(m);
    }
    // From "<|open|>think<|sep|>" (Kimi-K3): its tokens on their own.
    expect(OUTPUT_MARKERS).toEqual(expect.arrayContaining(["<|open|>", "<|sep|>"]));
    expect(new Set(OUTPUT_MARKERS).size).toBe(OUTPUT_MARKERS.length);
  });
});
