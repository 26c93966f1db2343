import { describe, expect, it } from "vitest";
import { readLlamaSse } from "./read-llama-sse.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";

const enc = new TextEncoder();

const parse = async (parts: Uint8Array[]): Promise<UpstreamEvent[]> => readLlamaSse(parts);

const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const delta = (d: object, finish: string | null = null) =>
  frame({ choices: [{ finish_reason: finish, index: 0, delta: d }], created: 1, id: "chatcmpl-x", model: "m", object: "chat.completion.chunk" });

const STREAM =
  delta({ role: "assistant", content: null }) +
  delta({ content: "Grüße, " }) +
  delta({ content: "世界 👋" }) +
  delta({}, "stop") +
  frame({ choices: [], usage: { completion_tokens: 5, prompt_tokens: 3, total_tokens: 8 }, timings: { predicted_n: 5 } }) +
  "data: [DONE]\n\n";

const EXPECTED: UpstreamEvent[] = [
  { type: "text", delta: "Grüße, " },
  { type: "text", delta: "世界 👋" },
  { type: "finish", reason: "stop" },
  { type: "usage", usage: { promptTokens: 3, completionTokens: 5 }, timings: { predicted_n: 5 } },
];

describe("llamaSseReader", () => {
  it("turns a whole stream into events (role-only and null content produce nothing)", async () => {
    expect(await parse([enc.encode(STREAM)])).toEqual(EXPECTED);
  });

  it("gives the same events when every byte arrives on its own (frames and UTF-8 characters split)", async () => {
    const bytes = enc.encode(STREAM);
    expect(await parse([...bytes].map((b) => new Uint8Array([b])))).toEqual(EXPECTED);
  });

  it("ignores comment lines (llama-server's pings)", async () => {
    const withPings = ":\n\n" + STREAM.replace("data: [DONE]", ": ping\n\ndata: [DONE]");
    expect(await parse([enc.encode(withPings)])).toEqual(EXPECTED);
  });

  it("accepts CRLF line endings", async () => {
    expect(await parse([enc.encode(STREAM.replaceAll("\n", "\r\n"))])).toEqual(EXPECTED);
  });

  it("reports a stream that ends before finishing as an error, never a silent end", async () => {
    const cut = delta({ content: "Par" });
    const events = await parse([enc.encode(cut)]);
    expect(events[0]).toEqual({ type: "text", delta: "Par" });
    expect(events[1]).toMatchObject({ type: "error", error: { code: "upstream_error", status: 502 } });
    expect(events).toHaveLength(2);
  });

  it("accepts a finished stream without [DONE]", async () => {
    const events = await parse([enc.encode(delta({ content: "a" }) + delta({}, "length"))]);
    expect(events).toEqual([
      { type: "text", delta: "a" },
      { type: "finish", reason: "length" },
    ]);
  });

  it("turns an in-stream data error (current builds) into one terminal error event", async () => {
    const s = delta({ content: "x" }) + frame({ error: { code: 500, message: "Invalid diff: now finding less tool calls!", type: "server_error" } });
    const events = await parse([enc.encode(s)]);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: "error", error: { code: "upstream_error", status: 502 } });
    expect((events[1] as { error: { message: string } }).error.message).toContain("Invalid diff");
  });

  it("reads older builds' `error:` lines and ignores the [DONE] after them", async () => {
    const s =
      delta({ content: "x" }) +
      `error: {"code":400,"message":"request (3030 tokens) exceeds the available context size (1024 tokens), try increasing it","type":"exceed_context_size_error"}\n\n` +
      "data: [DONE]\n\n";
    const events = await parse([enc.encode(s)]);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: "error", error: { code: "context_length_exceeded", status: 400 } });
  });

  it("reads an `error:` line that comes before any data (builds before PR #16486)", async () => {
    const s = `error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":631,"n_ctx":256}\n\ndata: [DONE]\n\n`;
    const events = await parse([enc.encode(s)]);
    expect(events).toEqual([expect.objectContaining({ type: "error", error: expect.objectContaining({ code: "context_length_exceeded" }) })]);
  });

  it("reads an `error:` line even when it arrives one byte at a time (eventsource-parser would skip it)", async () => {
    const s = `error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}\n\ndata: [DONE]\n\n`;
    const events = await parse([...enc.encode(s)].map((b) => new Uint8Array([b])));
    expect(events).toEqual([expect.objectContaining({ type: "error", error: expect.objectContaining({ code: "context_length_exceeded" }) })]);
  });

  it("ignores everything after an error (intermediate builds send [DONE] and more)", async () => {
    const s = frame({ error: { code: 500, message: "boom", type: "server_error" } }) + delta({ content: "late" }) + "data: [DONE]\n\n";
    const events = await parse([enc.encode(s)]);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe("error");
  });

  it("reports a frame that is not JSON", async () => {
    const events = await parse([enc.encode("data: {not json\n\n")]);
    expect(events).toEqual([expect.objectContaining({ type: "error" })]);
  });

  it("maps reasoning_content and native tool-call deltas, keeping a resent name as a name event", async () => {
    const s =
      delta({ reasoning_content: "User wants weather." }) +
      delta({ tool_calls: [{ index: 0, id: "x7Kq", type: "function", function: { name: "get_weat", arguments: "" } }] }) +
      delta({ tool_calls: [{ index: 0, id: "x7Kq", type: "function", function: { name: "get_weather", arguments: "{\"city\": \"Pa" } }] }) +
      delta({ tool_calls: [{ index: 0, function: { arguments: "ris\"}" } }] }) +
      delta({}, "tool_calls");
    expect(await parse([enc.encode(s)])).toEqual([
      { type: "reasoning", delta: "User wants weather." },
      { type: "toolCall", index: 0, id: "x7Kq", name: "get_weat", argumentsDelta: "" },
      { type: "toolCall", index: 0, id: "x7Kq", name: "get_weather", argumentsDelta: "{\"city\": \"Pa" },
      { type: "toolCall", index: 0, argumentsDelta: "ris\"}" },
      { type: "finish", reason: "tool_calls" },
    ]);
  });

  it("replaces invalid UTF-8 with U+FFFD rather than failing", async () => {
    const head = enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a');
    const tail = enc.encode('b"},"finish_reason":"stop"}]}\n\n');
    const events = await parse([head, new Uint8Array([0xff]), tail]);
    expect(events[0]).toEqual({ type: "text", delta: "a\uFFFDb" });
  });
});
