// What a deployment offers to serving tabs (GET /v1/sessions/models): each browser target's model,
// with its GGUF file when it has one, and the GGUF the zero-config llama-server runs (LLAMA_GGUF).
import type { Config } from "../../config/config.ts";

export interface OfferedModel {
  /** The id the tab announces in `hello`. */
  model: string;
  /** The GGUF file to run with llama.cpp; absent: a web-llm model id. */
  gguf?: string;
}

/** Pure: every browser target of `config` once (by model and file), declared order, the server's GGUF last. */
export function offeredModels(config: Config): OfferedModel[] {
  const out: OfferedModel[] = [];
  const seen = new Set<string>();
  const add = (m: OfferedModel) => {
    const key = JSON.stringify([m.model, m.gguf ?? null]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(m);
  };
  for (const model of Object.values(config.models ?? {})) {
    for (const t of model.targets) if (t.kind === "browser") add({ model: t.model, ...(t.gguf ? { gguf: t.gguf } : {}) });
  }
  if (config.llamaGguf) add({ model: config.llamaGguf.model, gguf: config.llamaGguf.url });
  return out;
}
