// The page's web-llm list with the deployment's self-hosted records, and the sentence a model library
// that does not fit gives.
import { describe, expect, it } from "vitest";
import { deploymentModels, modelsThatFit, withDeploymentRecords } from "../../../worker/models.ts";
import { describeError } from "../../../worker/describe-error.ts";

type AppConfig = Parameters<typeof withDeploymentRecords>[0];
const prebuilt: AppConfig = {
  model_list: [
    { model_id: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", model: "https://hub.example/mlc-ai/Qwen2.5-0.5B-Instruct-q4f32_1-MLC", model_lib: "https://libs.example/v0_2_86/base/Qwen2-0.5B-Instruct-q4f32_1_cs1k-webgpu.wasm", vram_required_MB: 1060.2, overrides: { context_window_size: 4096 } },
    { model_id: "SmolLM2-360M-Instruct-q4f32_1-MLC", model: "https://hub.example/mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC", model_lib: "https://libs.example/v0_2_86/base/SmolLM2-360M-Instruct-q4f32_1-MLC_cs1k-webgpu.wasm", vram_required_MB: 579.61 },
  ],
};

describe("withDeploymentRecords", () => {
  it("puts the deployment's records first, absolute, replacing web-llm's own record of an id but keeping its other fields", () => {
    const { appConfig, records } = withDeploymentRecords(
      prebuilt,
      [
        { model: "tiny", gguf: "https://x/tiny.gguf" },
        { model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", mlc: { url: "http://127.0.0.1:9/models/qwen05", lib: "http://127.0.0.1:9/libs/qwen05.wasm" } },
        { model: "Own-Model-q4f16_1-MLC", mlc: { url: "https://team.example/own", lib: "https://team.example/own.wasm" } },
        { model: "SmolLM2-360M-Instruct-q4f32_1-MLC" },
      ],
      "http://127.0.0.1:8787/",
    );
    expect(records.map((r) => r.model_id)).toEqual(["Qwen2.5-0.5B-Instruct-q4f32_1-MLC", "Own-Model-q4f16_1-MLC"]);
    expect(records[0]).toEqual({ ...prebuilt.model_list[0], model: "http://127.0.0.1:9/models/qwen05", model_lib: "http://127.0.0.1:9/libs/qwen05.wasm" });
    expect(records[1]).toEqual({ model_id: "Own-Model-q4f16_1-MLC", model: "https://team.example/own", model_lib: "https://team.example/own.wasm" });
    expect(appConfig.model_list.map((r) => r.model_id)).toEqual(["Qwen2.5-0.5B-Instruct-q4f32_1-MLC", "Own-Model-q4f16_1-MLC", "SmolLM2-360M-Instruct-q4f32_1-MLC"]);
    expect(appConfig.model_list.filter((r) => r.model_id === "Qwen2.5-0.5B-Instruct-q4f32_1-MLC")).toHaveLength(1);
  });

  it("lists the deployment's records this GPU runs (an f16 one only with shader-f16), in the deployment's order", () => {
    const { records } = withDeploymentRecords(prebuilt, [
      { model: "Own-Model-q4f16_1-MLC", mlc: { url: "https://team.example/own", lib: "https://team.example/own.wasm" } },
      { model: "Own-Model-q4f32_1-MLC", mlc: { url: "https://team.example/own32", lib: "https://team.example/own32.wasm" } },
    ], "https://team.example/");
    expect(deploymentModels(records, { shaderF16: false })).toEqual({ fit: [{ id: "Own-Model-q4f32_1-MLC", vramMB: null, context: null, embedding: false }], needF16: ["Own-Model-q4f16_1-MLC"] });
    expect(deploymentModels(records, { shaderF16: true }).fit.map((m) => m.id)).toEqual(["Own-Model-q4f16_1-MLC", "Own-Model-q4f32_1-MLC"]);
    // The prebuilt list is unchanged for models the deployment does not host.
    expect(modelsThatFit(prebuilt.model_list, { shaderF16: false }).map((m) => m.id)).toEqual(["SmolLM2-360M-Instruct-q4f32_1-MLC", "Qwen2.5-0.5B-Instruct-q4f32_1-MLC"]);
  });
});

describe("describeError for a model library", () => {
  it("a LinkError (web-llm's Web Worker sends the string form) says the library is not for this web-llm version, and what to change", () => {
    const text = describeError('LinkError: WebAssembly.instantiate(): Import #0 "env" "x": function import requires a callable\n    at Object.instantiate (index.js:9254)', { webLlmVersion: "v0_2_86/base" });
    expect(text).toBe(
      'That did not work: the model library is not a web-llm model library for this web-llm version (v0_2_86/base): the model\'s library (mlc.lib in the deployment\'s configuration) must be built for it. (LinkError: WebAssembly.instantiate(): Import #0 "env" "x": function import requires a callable)',
    );
  });

  it("a CompileError says the library is not WebAssembly", () => {
    expect(describeError(Object.assign(new Error("WebAssembly.instantiate(): expected magic word 00 61 73 6d"), { name: "CompileError" }))).toMatch(/^That did not work: the model library is not WebAssembly \(a wrong URL, or a broken download\)/);
  });
});
