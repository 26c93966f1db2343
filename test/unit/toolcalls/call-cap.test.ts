// One answer makes at most MAX_CALLS_PER_ANSWER calls (issue 26): a model looping on a call header
// writes thousands, and each kept call would be scored, validated and answered at many times its
// size. Past the cap call markup is read and dropped, and the first call counts what was dropped.

import { describe, expect, it } from "vitest";
import { MAX_CALLS_PER_ANSWER } from "../../../src/toolcalls/scan/stream-rewriter.ts";
import { rewriteToolCalls, ToolCallStreamRewriter } from "./imports.ts";
import { TOOLS } from "./fixtures.ts";

const CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n';

describe("the calls one answer makes", () => {
  it("are all kept up to the cap", () => {
    const out = rewriteToolCalls({ tools: TOOLS, text: CALL.repeat(MAX_CALLS_PER_ANSWER) });
    expect(out.tool_calls).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(out.tool_calls.flatMap((c) => c.problems.map((p) => p.code))).not.toContain("extra_calls_dropped");
  });

  it("past the cap, are the first MAX_CALLS_PER_ANSWER; the rest is dropped (not text) and counted on the first call", () => {
    const out = rewriteToolCalls({ tools: TOOLS, text: `Checking.\n${CALL.repeat(MAX_CALLS_PER_ANSWER + 500)}` });
    expect(out.tool_calls).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(out.content).toBe("Checking.");
    expect(out.tool_calls[0]!.problems).toContainEqual(expect.objectContaining({ code: "extra_calls_dropped", message: expect.stringContaining("500 further call(s)"), penalty: 0 }));
    expect(out.tool_calls[0]!.score).toBe(1);
  });

  it("streamed, a Functionary header loop keeps the cap and leaks no markup", () => {
    const r = new ToolCallStreamRewriter(TOOLS);
    const text = ">>>get_weather\n".repeat(4 * MAX_CALLS_PER_ANSWER);
    const events = [];
    for (let i = 0; i < text.length; i += 16) events.push(...r.push(text.slice(i, i + 16)));
    events.push(...r.flush("stop"));
    expect(r.toolCalls).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("")).not.toContain(">>>");
    expect(r.toolCalls[0]!.problems.map((p) => p.code)).toContain("extra_calls_dropped");
  });

  it("with parallel_tool_calls false, the dropped calls are counted once, as before", () => {
    const out = rewriteToolCalls({ tools: TOOLS, text: CALL.repeat(MAX_CALLS_PER_ANSWER + 10), parallel_tool_calls: false });
    expect(out.tool_calls).toHaveLength(1);
    const dropped = out.tool_calls[0]!.problems.filter((p) => p.code === "extra_calls_dropped");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.message).toContain(`${MAX_CALLS_PER_ANSWER + 9} further call(s)`);
  });
});
