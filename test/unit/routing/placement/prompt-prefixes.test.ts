import { describe, expect, it } from "vitest";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";

const system = { role: "system", content: "You are a coding agent." };
const tools = [{ type: "function", function: { name: "shell", parameters: { type: "object" } } }];

describe("promptPrefixes", () => {
  it("one prefix per message (tools first), sizes growing; the next turn's chain starts with this turn's", () => {
    const turn1 = [system, { role: "user", content: "fix the build" }];
    const turn2 = [...turn1, { role: "assistant", content: "running make" }, { role: "user", content: "it failed" }];
    const a = promptPrefixes(turn1, tools);
    const b = promptPrefixes(turn2, tools);
    expect(a).toHaveLength(3);
    expect(b).toHaveLength(5);
    expect(b.slice(0, 3)).toEqual(a);
    expect(a[0]!.chars).toBe(JSON.stringify(tools).length);
    expect(a[2]!.chars).toBe(JSON.stringify(tools).length + JSON.stringify(turn1[0]).length + JSON.stringify(turn1[1]).length);
  });
  it("a different earlier message changes every prefix from there on, not before", () => {
    const a = promptPrefixes([system, { role: "user", content: "a" }, { role: "user", content: "c" }]);
    const b = promptPrefixes([system, { role: "user", content: "b" }, { role: "user", content: "c" }]);
    expect(a[0]!.hash).toBe(b[0]!.hash);
    expect(a[1]!.hash).not.toBe(b[1]!.hash);
    expect(a[2]!.hash).not.toBe(b[2]!.hash);
  });
  it("no tools, no tools prefix; the same messages with tools hash apart", () => {
    const m = [{ role: "user", content: "hi" }];
    expect(promptPrefixes(m)).toHaveLength(1);
    expect(promptPrefixes(m, [])).toEqual(promptPrefixes(m));
    expect(promptPrefixes(m, tools)[1]!.hash).not.toBe(promptPrefixes(m)[0]!.hash);
  });
});
