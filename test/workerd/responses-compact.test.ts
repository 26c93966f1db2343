import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, received } from "./harness.ts";

// POST /v1/responses/compact: the model's summary sealed into a compaction item, which a later turn
// hands back in place of the turns it replaces.

const SUMMARY = "The user wants hello.txt; it was written.";
const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/${encodeURIComponent(SUMMARY)}` }] } });

async function post(path: string, body: Record<string, unknown>) {
  const { res, done } = await call(path, { json: { model: "m", ...body } }, vars);
  const json = (await res.json()) as any;
  await done();
  return { status: res.status, body: json };
}

describe("POST /v1/responses/compact", () => {
  it("answers the user messages and one sealed compaction item; handed back, the summary reaches the model", async () => {
    const input = [
      { role: "user", content: "Write hello.txt" },
      { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"cmd":"echo hi > hello.txt"}' },
      { type: "function_call_output", call_id: "call_1", output: "done" },
      { role: "assistant", content: "Written." },
    ];
    const compacted = await post("/v1/responses/compact", { input, instructions: "You are a coder." });
    expect(compacted.status, JSON.stringify(compacted.body)).toBe(200);
    expect(compacted.body.object).toBe("response.compaction");
    expect(compacted.body.output.map((i: any) => i.type)).toEqual(["message", "compaction"]);
    expect(compacted.body.output[0]).toMatchObject({ role: "user", content: [{ type: "input_text", text: "Write hello.txt" }] });
    const item = compacted.body.output[1];
    expect(item.encrypted_content).toMatch(/^sy1\./);
    expect(item.encrypted_content).not.toContain("hello.txt");
    expect(compacted.body.usage.output_tokens).toBeGreaterThan(0);

    // The summary request: the whole conversation, no tools, the summary prompt last.
    const asked = JSON.parse((await received()).filter((r) => r.path.includes(encodeURIComponent(SUMMARY))).at(-1)!.body);
    expect(asked.tools).toBeUndefined();
    expect(asked.messages.at(-1).content).toMatch(/^Summarize the conversation/);
    expect(asked.messages[0]).toEqual({ role: "system", content: "You are a coder." });

    const next = await post("/v1/responses", { input: [...compacted.body.output, { role: "user", content: "Now delete it." }], store: false });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    const sentNext = JSON.parse((await received()).filter((r) => r.path.includes(encodeURIComponent(SUMMARY))).at(-1)!.body);
    const texts = sentNext.messages.map((m: any) => m.content);
    expect(texts[0]).toBe("Write hello.txt");
    expect(texts.join("\n")).toContain(SUMMARY);
    expect(texts.at(-1)).toBe("Now delete it.");
  });
});
