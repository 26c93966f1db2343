import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, parseSse, received } from "./harness.ts";

// Compaction v2, as Codex sends it on its built-in provider: an ordinary streaming POST /v1/responses
// whose last input item is {"type":"compaction_trigger"}. Codex needs exactly one `compaction` output
// item and `response.completed`, else it prints "Error running remote compact task" and exits.

const SUMMARY = "The user wants notes.md; it was written with two lines.";
const tag = `u-${crypto.randomUUID()}`;
const route = `/${tag}/behave/say/${encodeURIComponent(SUMMARY)}`;
const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}${route}` }] } });

// What Codex 0.171 sends (its tools, store false, the reasoning include), history then the trigger.
const history = [
  { type: "message", role: "user", content: [{ type: "input_text", text: "Write notes.md" }] },
  { type: "function_call", call_id: "call_1", name: "exec_command", arguments: '{"cmd":"printf \\"a\\\\nb\\" > notes.md"}' },
  { type: "function_call_output", call_id: "call_1", output: "exit 0" },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "Written." }] },
];
const codexTurn = {
  model: "m",
  instructions: "You are Codex.",
  store: false,
  include: ["reasoning.encrypted_content"],
  tools: [{ type: "function", name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } }],
  parallel_tool_calls: false,
};

const lastSent = async () => JSON.parse((await received()).filter((r) => r.path.includes(encodeURIComponent(SUMMARY))).at(-1)!.body);

describe("compaction_trigger (compaction v2)", () => {
  it("streams one sealed compaction item and response.completed; the summary is asked for without tools", async () => {
    const { res, done } = await call("/v1/responses", { json: { ...codexTurn, stream: true, input: [...history, { type: "compaction_trigger" }] } }, vars);
    expect(res.status).toBe(200);
    const { frames } = parseSse(await res.text());
    await done();
    const types = frames.map((f) => f.type);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types.filter((t) => t === "response.output_text.delta")).toEqual([]);
    const items = frames.filter((f) => f.type === "response.output_item.done").map((f) => f.item);
    expect(items).toHaveLength(1);
    expect(items[0].type).toBe("compaction");
    expect(items[0].encrypted_content).toMatch(/^sy1\./);
    expect(items[0].encrypted_content).not.toContain("notes.md");
    const completed = frames.at(-1)!.response;
    expect(completed.status).toBe("completed");
    expect(completed.output).toEqual(items);
    expect(completed.usage.output_tokens).toBeGreaterThan(0);

    const asked = await lastSent();
    expect(asked.tools).toBeUndefined();
    expect(asked.messages[0]).toEqual({ role: "system", content: "You are Codex." });
    expect(asked.messages.at(-1).content).toMatch(/^Summarize the conversation/);
    expect(JSON.stringify(asked.messages)).not.toContain("compaction_trigger");

    // The next turn sends the compaction item in place of the history: the summary reaches the model.
    const next = await call("/v1/responses", { json: { ...codexTurn, stream: true, input: [items[0], { type: "message", role: "user", content: [{ type: "input_text", text: "Now add a line." }] }] } }, vars);
    expect(next.res.status).toBe(200);
    await next.res.text();
    await next.done();
    const sent = await lastSent();
    expect(sent.messages.map((m: any) => m.content)).toEqual(["You are Codex.", SUMMARY, "Now add a line."]);
  });

  it("answers a non-stream trigger with the compaction item as the response's only output", async () => {
    const { res, done } = await call("/v1/responses", { json: { ...codexTurn, input: [...history, { type: "compaction_trigger" }] } }, vars);
    const body = await res.json<any>();
    await done();
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "response", status: "completed" });
    expect(body.output.map((i: any) => i.type)).toEqual(["compaction"]);
  });

  it("a trigger that is not the last item is dropped, and the turn is answered as usual", async () => {
    const { res, done } = await call("/v1/responses", { json: { ...codexTurn, input: [{ type: "compaction_trigger" }, ...history] } }, vars);
    const body = await res.json<any>();
    await done();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.output.map((i: any) => i.type)).toEqual(["message"]);
  });
});
