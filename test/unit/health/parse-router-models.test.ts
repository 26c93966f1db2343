import { describe, expect, it } from "vitest";
import { MAX_MODELS, parseRouterModels, parseRouterProps } from "../../../src/health/parse-router-models.ts";

// The shapes a router of the llama.cpp we build answers (docs: /work/shared/reference §11), trimmed.
const entry = (id: string, value: string, extra: Record<string, unknown> = {}) => ({ id, object: "model", owned_by: "llamacpp", status: { value, args: ["llama-server", "--model", `/m/${id}.gguf`], ...extra } });

describe("parseRouterModels", () => {
  it("reads every model and its status", () => {
    const list = { data: [entry("alpha", "loaded"), entry("beta", "unloaded"), entry("gamma", "loading"), entry("delta", "sleeping")] };
    expect(parseRouterModels(list)).toEqual([
      { id: "alpha", status: "loaded", failed: false },
      { id: "beta", status: "unloaded", failed: false },
      { id: "gamma", status: "loading", failed: false },
      { id: "delta", status: "sleeping", failed: false },
    ]);
  });
  it("a failed load: unloaded with failed: true", () => {
    expect(parseRouterModels({ data: [entry("broken", "unloaded", { failed: true, exit_code: 1 })] })).toEqual([{ id: "broken", status: "unloaded", failed: true }]);
  });
  it("a single-model server's list (no status) is not a router's", () => {
    expect(parseRouterModels({ object: "list", data: [{ id: "qwen", object: "model", meta: { n_ctx: 4096 } }] })).toBeNull();
    expect(parseRouterModels({})).toBeNull();
    expect(parseRouterModels(null)).toBeNull();
  });
  it("an unknown status counts as unloaded; bad ids are skipped; the list is bounded", () => {
    expect(parseRouterModels({ data: [entry("a", "weird"), { id: 7, status: { value: "loaded" } }, entry("x".repeat(300), "loaded")] })).toEqual([{ id: "a", status: "unloaded", failed: false }]);
    const many = { data: Array.from({ length: MAX_MODELS + 50 }, (_, i) => entry(`m${i}`, "unloaded")) };
    expect(parseRouterModels(many)).toHaveLength(MAX_MODELS);
  });
});

describe("parseRouterProps", () => {
  it("a router's own /props: its max_instances", () => {
    expect(parseRouterProps({ role: "router", max_instances: 1, models_autoload: true })).toEqual({ modelsMax: 1 });
    expect(parseRouterProps({ role: "router", max_instances: 0 })).toEqual({ modelsMax: Infinity });
  });
  it("a single model's /props is not a router's", () => {
    expect(parseRouterProps({ total_slots: 2, default_generation_settings: { n_ctx: 1024 } })).toBeNull();
  });
});
