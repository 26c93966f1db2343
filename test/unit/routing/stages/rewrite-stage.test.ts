// The rewrite stage (src/routing/rewrite/rewrite-stage.ts): the one place an answer meets the tool-call rewriter.
import { describe, expect, it } from "vitest";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { offersTools, rewriteAnswer, rewriteOrFail } from "../../../../src/routing/rewrite/rewrite-stage.ts";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";
import { finish, text } from "./fake-upstream.ts";
import type { EventPull } from "../../../../src/events/event-source.ts";

const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const request = (more: Partial<ChatRequest> = {}): ChatRequest => ({ model: "m", messages: [{ role: "user", content: "weather?" }], ...more }) as ChatRequest;

function pull(events: UpstreamEvent[]): EventPull {
  let i = 0;
  return { next: async () => events[i++] ?? null, cancel: () => {} };
}

async function all(first: UpstreamEvent, events: EventPull): Promise<UpstreamEvent[]> {
  const out = [first];
  for (let e = await events.next(); e; e = await events.next()) out.push(e);
  return out;
}

describe("the rewrite stage", () => {
  it("offers tools only with tools declared and tool_choice other than none", () => {
    expect(offersTools(request())).toBe(false);
    expect(offersTools(request({ tools: TOOLS } as Partial<ChatRequest>))).toBe(true);
    expect(offersTools(request({ tools: TOOLS, tool_choice: "none" } as Partial<ChatRequest>))).toBe(false);
  });

  it("leaves an answer without tools and not raw exactly as it was (the same objects)", async () => {
    const events = pull([finish()]);
    const out = await rewriteAnswer(request(), { first: text("<tool_call>"), events });
    expect(out!.events).toBe(events);
    expect(out!.first).toEqual(text("<tool_call>"));
    expect(out!.reports()).toEqual([]);
  });

  it("reads a call written as text into a tool call, with its score", async () => {
    const call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
    const out = await rewriteAnswer(request({ tools: TOOLS } as Partial<ChatRequest>), { first: text(call.slice(0, 20)), events: pull([text(call.slice(20)), finish()]) });
    const events = await all(out!.first, out!.events);
    expect(events.filter((e) => e.type === "text")).toEqual([]);
    expect(events.some((e) => e.type === "toolCall" && e.name === "get_weather")).toBe(true);
    expect(out!.reports()).toHaveLength(1);
    expect(out!.reports()[0]!.score).toBe(1);
  });

  it("reads raw text without tools for its reasoning, from where the prompt left it", async () => {
    const out = await rewriteAnswer(request(), { first: text("thinking</think>"), events: pull([text("answer"), finish()]), raw: { generationPrompt: "<think>" } });
    const events = await all(out!.first, out!.events);
    expect(events.filter((e) => e.type === "reasoning").map((e) => (e as { delta: string }).delta).join("")).toBe("thinking");
    expect(events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("")).toBe("answer");
  });

  it("an answer that comes to nothing is a retryable error of its target", async () => {
    const err = await rewriteOrFail(request(), { first: text("<|im_end|>"), events: pull([]), raw: { generationPrompt: "" } }, "llama:x").catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: "upstream_error", retryable: true });
  });
});
