// What routing may ask of an OpenAI-compatible target: its name and capabilities, and nothing llama-only.
import { describe, expect, it } from "vitest";
import type { OpenAiTarget } from "../../../../src/config/config-schema.ts";
import { openaiAdapter } from "../../../../src/upstreams/openai/openai-adapter.ts";

const target = (extra: Partial<OpenAiTarget> = {}) => ({ kind: "openai" as const, url: "https://user:pw@gpu-1.example.com:8000/v1?key=secret", name: "openai:gpu-1.example.com:8000", ...extra });

describe("openaiAdapter", () => {
  it("is named by kind and host, never the path, query or credentials", () => {
    expect(openaiAdapter.name(target())).toBe("openai:gpu-1.example.com:8000");
  });

  it("a tracked server probed by GET /v1/models only, not gated by slots, no context window learned", () => {
    const caps = openaiAdapter.capabilities(target({ url: "http://127.0.0.1:8787/v1/", apiKeySecret: "K", headers: { "x-portkey-provider": "openai" }, weight: 3 }));
    expect(caps.server).toEqual({
      key: "http://127.0.0.1:8787",
      url: "http://127.0.0.1:8787/v1/",
      apiKeySecret: "K",
      headers: { "x-portkey-provider": "openai" },
      probe: "models",
      reportsSlots: false,
      reportsContextWindow: false,
      weight: 3,
    });
    expect(caps).toMatchObject({ retriesSameTarget: true, placesByPrompt: false, teammateDevice: false });
  });

  it("continues an answer only where the operator said how (prefill), and not with prompt tools", () => {
    expect(openaiAdapter.capabilities(target()).continues).toBeNull();
    expect(openaiAdapter.capabilities(target({ prefill: "continue_final_message" })).continues).toEqual({ withPromptTools: false });
  });

  it("asks nothing llama-only: no token counts, no model description, no slot count, no constrained retry", () => {
    expect(Object.keys(openaiAdapter).sort()).toEqual(["capabilities", "chat", "completions", "embeddings", "name"]);
  });
});
