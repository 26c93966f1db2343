// What a deployment offers to serving tabs (GET /v1/sessions/models): each browser target's model,
// with its GGUF file or its self-hosted web-llm record when it has one, and the GGUF the zero-config
// llama-server runs (LLAMA_GGUF).
import type { Config } from "../../config/config.ts";

export interface OfferedModel {
  /** The id the tab announces in `hello`. */
  model: string;
  /** The GGUF file to run with llama.cpp. */
  gguf?: string;
  /** A self-hosted web-llm model: its folder (web-llm's `model`) and library (`model_lib`). */
  mlc?: { url: string; lib: string };
}

/**
 * Pure: every browser target of `config` once (by model and source), declared order, the server's
 * GGUF last. An entry with neither `gguf` nor `mlc` is a model of web-llm's prebuilt list.
 */
export function offeredModels(config: Config): OfferedModel[] {
  const out: OfferedModel[] = [];
  const seen = new Set<string>();
  const add = (m: OfferedModel) => {
    const key = JSON.stringify([m.model, m.gguf ?? null, m.mlc?.url ?? null, m.mlc?.lib ?? null]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(m);
  };
  for (const model of Object.values(config.models ?? {})) {
    for (const t of model.targets) {
      if (t.kind !== "browser") continue;
      add({ model: t.model, ...(t.gguf ? { gguf: t.gguf } : {}), ...(t.mlc ? { mlc: { url: t.mlc.url, lib: t.mlc.lib } } : {}) });
    }
  }
  if (config.llamaGguf) add({ model: config.llamaGguf.model, gguf: config.llamaGguf.url });
  return out;
}
