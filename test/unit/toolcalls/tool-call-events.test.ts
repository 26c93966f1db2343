import { describe, expect, it } from "vitest";
import { ToolCallEvents, type ToolCallReport, type UpstreamEventLike } from "./imports.ts";
import { TOOLS } from "./fixtures.ts";
import { pullThrough } from "../../../src/events/pull-through.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";

/** `events` as an attempt's pull, through ToolCallEvents as the Worker runs it (pullThrough). */
async function run(events: UpstreamEventLike[], onToolCalls?: (r: ToolCallReport[]) => void) {
  const transform = new ToolCallEvents(TOOLS, { onToolCalls });
  const [first, ...rest] = events as UpstreamEvent[];
  let i = 0;
  const pull = pullThrough(first!, { next: async () => rest[i++] ?? null, cancel() {} }, transform);
  const out: UpstreamEventLike[] = [];
  for (let e = await pull.next(); e; e = await pull.next()) out.push(e);
  return { out, transform };
}

describe("ToolCallEvents", () => {
  it("rewrites text, passes other events through and turns stop into tool_calls", async () => {
    let reports: ToolCallReport[] = [];
    const { out, transform } = await run(
      [
        { type: "reasoning", delta: "hmm" },
        { type: "text", delta: "Sure. <tool_call>" },
        { type: "text", delta: '{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>' },
        { type: "finish", reason: "stop" },
        { type: "usage", usage: { promptTokens: 3, completionTokens: 9 } },
      ],
      (r) => (reports = r),
    );
    expect(out.map((e) => e.type)).toEqual(["reasoning", "text", "toolCall", "toolCall", "finish", "usage"]);
    expect(out[4]).toEqual({ type: "finish", reason: "tool_calls" });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ index: 0, score: 1, problems: [] });
    expect(reports[0]!.id).toBe((out[2] as { id?: string }).id);
    expect(transform.toolCalls).toEqual(reports);
  });

  it("flushes held-back text at the finish", async () => {
    const { out } = await run([
      { type: "text", delta: "A less-than sign <" },
      { type: "finish", reason: "stop" },
    ]);
    expect(out).toEqual([
      { type: "text", delta: "A less-than sign" },
      { type: "text", delta: " <" },
      { type: "finish", reason: "stop" },
    ]);
  });

  it("numbers its calls after native calls from the upstream", async () => {
    const { out } = await run([
      { type: "toolCall", index: 0, id: "up", name: "get_time", argumentsDelta: '{"tz":"UTC"}' },
      { type: "text", delta: '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' },
      { type: "finish", reason: "tool_calls" },
    ]);
    expect(out.filter((e) => e.type === "toolCall").map((e) => (e as { index: number }).index)).toEqual([0, 1, 1]);
  });

  it("sends nothing after an error event", async () => {
    const { out } = await run([
      { type: "text", delta: "<tool_call>{" },
      { type: "error", error: { status: 502, type: "upstream_error", code: "upstream_unreachable", message: "gone" } },
    ]);
    expect(out.map((e) => e.type)).toEqual(["error"]);
  });
});
