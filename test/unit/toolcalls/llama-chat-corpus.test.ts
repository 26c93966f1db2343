/// <reference types="vite/client" />
// llama.cpp's own chat-parser cases (tests/test-chat.cpp, exported to test/fixtures/llama-chat by
// scripts/llama-chat-fixtures.mjs) through the rewriter, one-shot and streamed at random split points.
// Every case passes: as llama.cpp expects it, or as a deliberate difference that says why
// (test/fixtures/llama-chat-differences.json; partial cases by the rule in the corpus runner).

import { describe, expect, it } from "vitest";
import { runCase, type Difference, type LlamaChatCase, type LlamaChatTools } from "../../support/llama-chat-corpus.ts";
import differences from "../../fixtures/llama-chat-differences.json";
import tools from "../../fixtures/llama-chat/tools.json";
import templateCases from "../../fixtures/template-cases.json";

const files = import.meta.glob<LlamaChatCase[]>(["../../fixtures/llama-chat/*.json", "!../../fixtures/llama-chat/tools.json"], {
  eager: true,
  import: "default",
});

describe("llama.cpp's chat-parser cases", () => {
  const all = Object.values(files).flat();

  it("are all there (427 cases over 56 templates at llama.cpp 80fb11a)", () => {
    expect(all.length).toBeGreaterThanOrEqual(427);
    expect(new Set(all.map((c) => c.template)).size).toBeGreaterThanOrEqual(56);
  });

  for (const [file, cases] of Object.entries(files)) {
    const template = file.replace(/^.*\//, "").replace(/\.json$/, "");
    describe(template, () => {
      for (const c of cases) {
        it(c.id, () => {
          const o = runCase(c, tools as LlamaChatTools, differences as Record<string, Difference>, 6);
          const detail = { input: c.input, expected: o.expected, oneShot: o.oneShot, streamed: o.streamMismatch?.got };
          expect(o.pass, JSON.stringify(detail, null, 1)).toBe(true);
        });
      }
    });
  }
});

// Templates llama.cpp ships (models/templates) without a case in test-chat.cpp: each one's output as the
// template renders an assistant message after its generation prompt (test/fixtures/template-cases.json).
describe("cases written from the templates llama.cpp ships without test cases", () => {
  const cases = templateCases as LlamaChatCase[];

  it("cover every such template", () => {
    expect(new Set(cases.map((c) => c.template)).size).toBeGreaterThanOrEqual(12);
  });

  for (const c of cases) {
    it(c.id, () => {
      const o = runCase(c, tools as LlamaChatTools, {}, 6);
      const detail = { input: c.input, expected: o.expected, oneShot: o.oneShot, streamed: o.streamMismatch?.got };
      expect(o.pass, JSON.stringify(detail, null, 1)).toBe(true);
    });
  }
});
