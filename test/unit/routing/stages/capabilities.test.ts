// Upstreams behind capabilities (src/upstreams/registry/adapters.ts): routing asks these, never the kind.
import { describe, expect, it } from "vitest";
import { canContinue } from "../../../../src/routing/continuation/continue-on-failure.ts";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";
import { adapterOf, capabilitiesOf, named } from "../../../../src/upstreams/registry/adapters.ts";

const plain = { model: "m", messages: [{ role: "user", content: "hi" }] } as ChatRequest;
const withTools = { ...plain, tools: [{ type: "function", function: { name: "f" } }] } as ChatRequest;

describe("capabilities", () => {
  it("a llama-server is a tracked server: probed as llama, gated on its slots, its window learned; it continues, retries itself, constrains", () => {
    const t = named({ kind: "llama", url: "http://gpu-1:8080/v1", weight: 3 });
    expect(t.name).toBe("llama:gpu-1:8080");
    const caps = capabilitiesOf(t);
    expect(caps.server).toMatchObject({ key: "http://gpu-1:8080", probe: "llama", reportsSlots: true, reportsContextWindow: true, weight: 3 });
    expect(caps.retriesSameTarget).toBe(true);
    expect(caps.placesByPrompt).toBe(false);
    expect(caps.teammateDevice).toBe(false);
    expect(adapterOf(t).constrained).toBeTypeOf("function");
    expect(adapterOf(t).readSlotCount).toBeTypeOf("function");
  });

  it("a browser target places requests itself, is a teammate's device, and cannot continue or constrain", () => {
    const t = named({ kind: "browser", model: "Qwen" }, { implicit: true });
    expect(t).toMatchObject({ name: "browser:Qwen", implicit: true });
    const caps = capabilitiesOf(t);
    expect(caps.server).toBeNull();
    expect(caps.placesByPrompt).toBe(true);
    expect(caps.teammateDevice).toBe(true);
    expect(caps.continues).toBeNull();
    expect(adapterOf(t).constrained).toBeUndefined();
  });

  it("continuation asks the capability: a prompt-mode server does not continue a tool answer, a native one does", () => {
    expect(canContinue(named({ kind: "llama", url: "http://a:1" }), withTools)).toBe(true);
    expect(canContinue(named({ kind: "llama", url: "http://a:1", tools: "prompt" }), withTools)).toBe(false);
    expect(canContinue(named({ kind: "llama", url: "http://a:1", tools: "prompt" }), plain)).toBe(true);
    expect(canContinue(named({ kind: "browser", model: "x" }), plain)).toBe(false);
  });

  it("capabilities are computed once per target", () => {
    const t = named({ kind: "llama", url: "http://b:1" });
    expect(capabilitiesOf(t)).toBe(capabilitiesOf(t));
  });
});
