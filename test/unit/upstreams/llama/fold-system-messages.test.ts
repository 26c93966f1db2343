import { describe, expect, it } from "vitest";
import { foldSystemMessages, hasLateSystemMessage, isTemplateRefusal } from "../../../../src/upstreams/llama/fold-system-messages.ts";
import templateRefusal from "../../../fixtures/llama/error-template-late-system-400.body.json";

describe("late system messages", () => {
  it("finds a system message after the conversation began, not leading ones", () => {
    expect(hasLateSystemMessage([{ role: "system", content: "a" }, { role: "developer", content: "b" }, { role: "user", content: "c" }])).toBe(false);
    expect(hasLateSystemMessage([{ role: "user", content: "c" }, { role: "system", content: "env" }])).toBe(true);
    expect(hasLateSystemMessage([{ role: "system", content: "a" }, { role: "user", content: "c" }, { role: "assistant", content: "d" }, { role: "developer", content: "e" }])).toBe(true);
  });

  it("folds every system text into one leading message, in order; the rest keeps its order", () => {
    const folded = foldSystemMessages([
      { role: "system", content: "You are Claude Code." },
      { role: "user", content: "Write hello.txt" },
      { role: "system", content: [{ type: "text", text: "# Environment\n" }, { type: "text", text: "cwd: /tmp" }] },
      { role: "assistant", content: "ok" },
      { role: "developer", content: "" },
    ]);
    expect(folded).toEqual([
      { role: "system", content: "You are Claude Code.\n\n# Environment\ncwd: /tmp" },
      { role: "user", content: "Write hello.txt" },
      { role: "assistant", content: "ok" },
    ]);
    expect(foldSystemMessages([{ role: "user", content: "x" }])).toEqual([{ role: "user", content: "x" }]);
  });

  it("recognises llama-server's refusal from a template (recorded), and not other 400s", () => {
    const recorded = templateRefusal.error.message;
    expect(isTemplateRefusal(recorded)).toBe(true);
    expect(isTemplateRefusal("Invalid tool_choice: bogus")).toBe(false);
  });
});
