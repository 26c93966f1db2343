// The `"kind": "openai"` target in SWITCHYARD_CONFIG: what it accepts and what it refuses, in words.
import { describe, expect, it } from "vitest";
import { ConfigSchema, OpenAiTargetSchema } from "../../../../src/config/config-schema.ts";
import { describeIssue } from "../../../../src/schemas/describe-issues.ts";

const problems = (target: unknown) => {
  const config = { models: { m: { targets: [target] } } };
  const r = ConfigSchema.safeParse(config);
  return r.success ? [] : r.error.issues.map((i) => { const d = describeIssue(i, config); return `${d.path}: ${d.message}`; });
};

describe("OpenAiTargetSchema", () => {
  it("a full target", () => {
    const t = {
      kind: "openai",
      url: "http://127.0.0.1:8787/v1",
      model: "Qwen/Qwen3-8B",
      apiKeySecret: "VLLM_KEY",
      headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": "http://gpu-1:8000/v1" },
      weight: 2,
      prefill: "continue_final_message",
      strip: ["grammar"],
      set: { top_k: 20 },
      tools: "prompt",
    };
    expect(OpenAiTargetSchema.parse(t)).toEqual(t);
    expect(problems({ kind: "openai", url: "http://localhost:11434" })).toEqual([]);
  });

  it.each([
    [{ "bad name": "x" }, 'headers.bad name must be a header name'],
    [{ Authorization: "Bearer x" }, 'headers.Authorization must not be "authorization": name the Worker secret holding the key in apiKeySecret'],
    [{ "Content-Type": "text/plain" }, 'headers.Content-Type must not be "content-type": Switchyard sets it itself'],
    [{ "x-a": "one\r\nx-b: two" }, "headers.x-a must be a value on one line"],
  ])("headers %j: %s", (headers, message) => {
    expect(problems({ kind: "openai", url: "http://h", headers }).join("\n")).toContain(`models.m.targets[0].${message}`);
  });

  it("prefill names a mechanism", () => {
    expect(problems({ kind: "openai", url: "http://h", prefill: true }).join("\n")).toContain("prefill");
  });

  it("a misspelt key is refused", () => {
    expect(problems({ kind: "openai", url: "http://h", header: {} }).join("\n")).toContain('unknown key "header"');
  });
});
