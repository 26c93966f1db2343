// GGUF browser targets ({"kind": "browser", "model", "gguf"}) and LLAMA_GGUF, the launcher's file offered to tabs.
import { describe, expect, it } from "vitest";
import { parseConfig, zeroConfigTargets } from "../../../src/config/config.ts";
import { offeredModels } from "../../../src/upstreams/browser/offered-models.ts";
import { browserAdapter } from "../../../src/upstreams/browser/browser-adapter.ts";

const parse = (targets: unknown[], extra: Record<string, unknown> = {}) =>
  parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { team: { targets } } }), ...extra });

describe("a browser target names its model source", () => {
  it("takes a GGUF URL; a target without one is a web-llm model as before", () => {
    const r = parse([{ kind: "browser", model: "qwen-0.5b", gguf: "https://models.example.com/qwen-0.5b-q4_k_m.gguf" }, { kind: "browser", model: "SmolLM2-360M-Instruct-q4f32_1-MLC" }]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(offeredModels(r.config)).toEqual([{ model: "qwen-0.5b", gguf: "https://models.example.com/qwen-0.5b-q4_k_m.gguf" }, { model: "SmolLM2-360M-Instruct-q4f32_1-MLC" }]);
  });

  it.each([
    [{ kind: "browser", model: "m", gguf: "ftp://x/m.gguf" }, "models.team.targets[0].gguf"],
    [{ kind: "browser", model: "m", gguf: "not a url" }, "models.team.targets[0].gguf"],
    [{ kind: "browser", model: "m", gguf: 3 }, "models.team.targets[0].gguf"],
    [{ kind: "browser", model: "m", ggfu: "https://x/m.gguf" }, 'unknown key "ggfu"'],
  ])("refuses %j, naming the field", (target, field) => {
    const r = parse([target]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.field} ${p.message}`).join("\n")).toContain(field);
  });

  it("a GGUF target continues answers (llama.cpp continues a trailing assistant message); a web-llm one does not", () => {
    const gguf = browserAdapter.capabilities({ kind: "browser", model: "m", gguf: "https://x/m.gguf", name: "browser:m" });
    const mlc = browserAdapter.capabilities({ kind: "browser", model: "m", name: "browser:m" });
    expect(gguf.continues).toEqual({ withPromptTools: false });
    expect(mlc.continues).toBeNull();
  });
});

describe("LLAMA_GGUF: the zero-config server's GGUF offered to tabs", () => {
  it("is offered as its file name, and the implicit browser target of that name runs it", () => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev", LLAMA_GGUF: "http://127.0.0.1:9000/tiny-qwen2-v1.gguf" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(offeredModels(r.config)).toEqual([{ model: "tiny-qwen2-v1", gguf: "http://127.0.0.1:9000/tiny-qwen2-v1.gguf" }]);
    expect(zeroConfigTargets(r.config, "tiny-qwen2-v1")[1]?.target).toEqual({ kind: "browser", model: "tiny-qwen2-v1", gguf: "http://127.0.0.1:9000/tiny-qwen2-v1.gguf" });
    expect(zeroConfigTargets(r.config, "other")[1]?.target).toEqual({ kind: "browser", model: "other" });
  });

  it.each([
    ["ftp://x/m.gguf", "is not an http:// or https:// URL"],
    ["http://127.0.0.1:9000/model.bin", "does not name a .gguf file"],
  ])("refuses %s, naming LLAMA_GGUF", (value, message) => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev", LLAMA_GGUF: value });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([{ field: "LLAMA_GGUF", message: expect.stringContaining(message) }]);
  });
});
