import { describe, expect, it } from "vitest";
import { compactionItem } from "../../../src/api/responses/compaction-item.ts";
import { convertResponsesRequest, needsSealer } from "../../../src/api/responses/convert-request.ts";
import { ResponseEncoder, type ResponseStreamEvent } from "../../../src/api/responses/response-encoder.ts";
import { REASONING_PURPOSE, openReasoning, sealReasoning } from "../../../src/api/responses/sealed-reasoning.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { createSealer } from "../../../src/api/responses/sealer.ts";
import { ResponsesRequestSchema } from "../../../src/schemas/responses-request.ts";

type Body = Record<string, unknown>;
const sealer = createSealer(new Uint8Array(32).fill(7));
const otherDeployment = createSealer(new Uint8Array(32).fill(8));
const parse = (body: Body) => validateBody(ResponsesRequestSchema, { model: "m", ...body });
const convert = (body: Body) => convertResponsesRequest(parse(body), sealer);
const convertWithoutSealer = (body: Body) => convertResponsesRequest(parse(body));
const ENCRYPTED = { include: ["reasoning.encrypted_content"] };

function encodeReasoning(body: Body) {
  const converted = convert(body);
  const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "m", echo: {}, ...converted.encoding }, () => ({ target: "t", attempts: 1 }));
  const out: ResponseStreamEvent[] = [
    ...enc.encode({ type: "reasoning", delta: "The user wants " }),
    ...enc.encode({ type: "reasoning", delta: "a file." }),
    ...enc.encode({ type: "text", delta: "Done." }),
    ...enc.encode({ type: "finish", reason: "stop" }),
    ...enc.end(),
  ];
  return { out, response: enc.response() as Record<string, any> };
}

describe("reasoning across stateless turns (include: reasoning.encrypted_content)", () => {
  it("each reasoning item carries encrypted_content on output_item.done and in the final response", () => {
    const { out, response } = encodeReasoning({ input: "hi", ...ENCRYPTED });
    const added = out.find((e) => e.type === "response.output_item.added")!.item as Body;
    const done = out.find((e) => e.type === "response.output_item.done")!.item as Body;
    expect(added.encrypted_content).toBeUndefined();
    expect(done).toMatchObject({ type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "The user wants a file." }], status: "completed" });
    expect(done.encrypted_content).toMatch(/^sy1\./);
    expect(openReasoning(sealer, done.encrypted_content as string)).toBe("The user wants a file.");
    expect(response.output[0].encrypted_content).toBe(done.encrypted_content);
    expect(response.output[1]).not.toHaveProperty("encrypted_content");
  });

  it("without the include, or without a sealer, nothing is sealed", () => {
    expect(encodeReasoning({ input: "hi" }).response.output[0]).not.toHaveProperty("encrypted_content");
    expect(convertWithoutSealer({ input: "hi", ...ENCRYPTED }).encoding.sealer).toBeUndefined();
  });

  it("a sealed item handed back is restored as the next assistant message's reasoning_content", () => {
    const { response } = encodeReasoning({ input: "hi", ...ENCRYPTED });
    const reasoning = { ...response.output[0], content: undefined }; // as Codex sends it back: no plain text
    const chat = convert({ input: [{ role: "user", content: "make a file" }, reasoning, response.output[1], { role: "user", content: "thanks" }], ...ENCRYPTED }).chat;
    expect(chat.messages).toEqual([
      { role: "user", content: "make a file" },
      { role: "assistant", content: "Done.", reasoning_content: "The user wants a file." },
      { role: "user", content: "thanks" },
    ]);
  });

  it("the opened text wins over plain text sent with it (no doubling)", () => {
    const item = { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "plain" }], encrypted_content: sealReasoning(sealer, "sealed") };
    const chat = convert({ input: [item, { type: "message", role: "assistant", content: "ok" }] }).chat;
    expect(chat.messages[0]!.reasoning_content).toBe("sealed");
  });

  it("a token that does not open (another deployment's, OpenAI's, or another purpose) is dropped, never a 400; plain summary text still counts", () => {
    const foreign = [
      otherDeployment.seal(REASONING_PURPOSE, JSON.stringify({ text: "theirs" })),
      sealer.seal("responses.compaction", JSON.stringify({ text: "wrong purpose" })),
      "gAAAAABoOpenAIsOwnOpaqueToken==",
      "sy1.not-base64!",
    ];
    for (const token of foreign) {
      const chat = convert({
        input: [
          { type: "reasoning", id: "rs_x", summary: [{ type: "summary_text", text: "Summary." }], encrypted_content: token },
          { type: "message", role: "assistant", content: "ok" },
        ],
      }).chat;
      expect(chat.messages).toEqual([{ role: "assistant", content: "ok", reasoning_content: "Summary." }]);
    }
    const bare = convert({ input: [{ type: "reasoning", summary: [], encrypted_content: foreign[0] }, { role: "user", content: "hi" }] }).chat;
    expect(bare.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("the route fetches the sealer only when it is needed", () => {
    expect(needsSealer(parse({ input: "hi" }))).toBe(false);
    expect(needsSealer(parse({ input: "hi", include: ["message.output_text.logprobs"] }))).toBe(false);
    expect(needsSealer(parse({ input: "hi", ...ENCRYPTED }))).toBe(true);
    expect(needsSealer(parse({ input: [{ type: "compaction", encrypted_content: "x" }] }))).toBe(true);
  });
});

describe("compaction items", () => {
  it("one this deployment sealed becomes a user message with its summary", () => {
    const item = compactionItem(sealer, "We created hello.txt.");
    expect(item).toMatchObject({ type: "compaction", id: expect.stringMatching(/^cmp_/), encrypted_content: expect.stringMatching(/^sy1\./) });
    const chat = convert({ input: [{ role: "developer", content: "Rules." }, item, { role: "user", content: "next?" }] }).chat;
    expect(chat.messages).toEqual([
      { role: "system", content: "Rules." },
      { role: "user", content: "We created hello.txt." },
      { role: "user", content: "next?" },
    ]);
    expect(convert({ input: [{ type: "compaction_summary", encrypted_content: item.encrypted_content }, { role: "user", content: "x" }] }).chat.messages[0]).toEqual({
      role: "user",
      content: "We created hello.txt.",
    });
  });

  it("one from elsewhere cannot be read and is left out", () => {
    const theirs = compactionItem(otherDeployment, "secret");
    const reasoningToken = { type: "compaction", encrypted_content: sealReasoning(sealer, "not a summary") };
    for (const item of [theirs, reasoningToken, { type: "compaction", encrypted_content: "gAAAA" }, { type: "compaction" }]) {
      expect(convert({ input: [item, { role: "user", content: "x" }] }).chat.messages).toEqual([{ role: "user", content: "x" }]);
    }
    expect(convertWithoutSealer({ input: [compactionItem(sealer, "s"), { role: "user", content: "x" }] }).chat.messages).toEqual([{ role: "user", content: "x" }]);
  });
});

describe("what Codex and other clients send besides", () => {
  it("history of hosted tool calls is dropped; other unknown item types are still a 400", () => {
    const chat = convert({
      input: [
        { role: "user", content: "search" },
        { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } },
        { type: "file_search_call", id: "fs_1", status: "completed", queries: [] },
        { type: "computer_call_output", call_id: "c", output: { type: "computer_screenshot" } },
        { type: "mcp_list_tools", id: "m", server_label: "s", tools: [] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Found it." }] },
      ],
    }).chat;
    expect(chat.messages).toEqual([{ role: "user", content: "search" }, { role: "assistant", content: "Found it." }]);
    expect(() => convert({ input: [{ type: "ghost_note" }] })).toThrow(/not supported/);
  });

  it("function_call_output as content items: the text in the tool message, images in a user message after the tool messages", () => {
    const image = { type: "input_image", image_url: "data:image/png;base64,AA" };
    const chat = convert({
      input: [
        { role: "user", content: "look" },
        { type: "function_call", call_id: "a", name: "view_image", arguments: '{"path":"a.png"}' },
        { type: "function_call", call_id: "b", name: "view_image", arguments: '{"path":"b.png"}' },
        { type: "function_call_output", call_id: "a", output: [image] },
        { type: "function_call_output", call_id: "b", output: [{ type: "input_text", text: "b.png:" }, image] },
        { type: "message", role: "assistant", content: "Two squares." },
      ],
    }).chat;
    const url = { type: "image_url", image_url: { url: "data:image/png;base64,AA" } };
    expect(chat.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "a", content: "[an image, in the next message]" },
      { role: "tool", tool_call_id: "b", content: "b.png:\n[an image, in the next message]" },
      { role: "user", content: [{ type: "text", text: "The tool output's images:" }, url, url] },
      { role: "assistant", content: "Two squares." },
    ]);
  });

  it("accepts the fields it ignores and forwards none of them", () => {
    const chat = convert({
      input: [{ type: "message", role: "system", content: "S" }, { type: "message", id: "msg_1", role: "user", content: [{ type: "input_text", text: "hi" }] }, { role: "developer", content: "late rule" }],
      prompt_cache_key: "k",
      client_metadata: { a: "b" },
      parallel_tool_calls: false,
      text: { verbosity: "low", format: { type: "text" } },
      reasoning: { effort: "high", summary: "detailed" },
      truncation: "auto",
      safety_identifier: "u1",
      service_tier: "priority",
      user: "u",
      metadata: { k: "v" },
      max_tool_calls: 3,
      stream_options: { include_obfuscation: false },
      top_logprobs: 2,
      include: ["reasoning.encrypted_content", "web_search_call.action.sources", "file_search_call.results"],
      context_management: [{ type: "compaction", compact_threshold: 1000 }],
      prompt_cache_retention: "24h",
      top_k: 5,
    }).chat as Body;
    expect(chat.messages).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "hi" },
      { role: "system", content: "late rule" },
    ]);
    for (const key of ["prompt_cache_key", "client_metadata", "text", "reasoning", "truncation", "safety_identifier", "service_tier", "user", "metadata", "max_tool_calls", "stream_options", "top_logprobs", "include", "context_management", "prompt_cache_retention", "logprobs"]) {
      expect(chat, key).not.toHaveProperty(key);
    }
    expect(chat).toMatchObject({ parallel_tool_calls: false, top_k: 5 });
  });
});
