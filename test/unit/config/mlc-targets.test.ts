// Self-hosted web-llm browser targets ({"kind": "browser", "model", "mlc": {"url", "lib"}}): validated
// with the field named, exclusive with gguf, and offered to tabs with their record.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { offeredModels } from "../../../src/upstreams/browser/offered-models.ts";
import { browserAdapter } from "../../../src/upstreams/browser/browser-adapter.ts";

const parse = (targets: unknown[]) => parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { team: { targets } } }) });
const MLC = { url: "https://models.example.com/qwen05-mlc", lib: "https://models.example.com/libs/Qwen2-0.5B-Instruct-q4f32_1-webgpu.wasm" };

describe("a browser target with a self-hosted web-llm record", () => {
  it("is offered to tabs with its record, beside GGUF and prebuilt web-llm targets; the same record once", () => {
    const r = parse([
      { kind: "browser", model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", mlc: MLC },
      { kind: "browser", model: "tiny", gguf: "https://models.example.com/tiny.gguf" },
      { kind: "browser", model: "SmolLM2-360M-Instruct-q4f32_1-MLC" },
      { kind: "browser", model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", mlc: { ...MLC } },
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(offeredModels(r.config)).toEqual([
      { model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", mlc: MLC },
      { model: "tiny", gguf: "https://models.example.com/tiny.gguf" },
      { model: "SmolLM2-360M-Instruct-q4f32_1-MLC" },
    ]);
  });

  it("is a web-llm target: answers are not continued in it (only a GGUF's llama.cpp continues a trailing assistant message)", () => {
    expect(browserAdapter.capabilities({ kind: "browser", model: "m", mlc: MLC, name: "browser:m" }).continues).toBeNull();
  });

  it.each([
    [{ mlc: { ...MLC, url: "ftp://models.example.com/m" } }, "models.team.targets[0].mlc.url must be an http:// or https:// URL"],
    [{ mlc: { ...MLC, lib: "m.wasm" } }, "models.team.targets[0].mlc.lib must be an http:// or https:// URL"],
    [{ mlc: { url: MLC.url } }, "models.team.targets[0].mlc.lib is required"],
    [{ mlc: MLC.url }, "models.team.targets[0].mlc must be an object, not string"],
    [{ mlc: { ...MLC, model_lib: MLC.lib } }, 'unknown key "model_lib" in models.team.targets[0].mlc'],
    [{ mlc: MLC, gguf: "https://models.example.com/m.gguf" }, "models.team.targets[0].mlc must not be set together with gguf"],
  ])("refuses %j, naming the field in a sentence", (fields, message) => {
    const r = parse([{ kind: "browser", model: "m", ...fields }]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toHaveLength(1);
    expect(`${r.problems[0]!.field} ${r.problems[0]!.message}`).toContain(message);
  });
});
