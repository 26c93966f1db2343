// Which web-llm models to offer: the deployment's self-hosted records (added to web-llm's list), then
// its prebuilt chat models smallest first, then its embedding models (model_type 1, e.g.
// snowflake-arctic-embed: they serve /v1/embeddings only); q4f32 when the GPU has no shader-f16 (f16
// records that do not declare the feature may still fail to compile there).
import type { AppConfig, ModelRecord } from "@mlc-ai/web-llm";

export const MAX_LISTED_MB = 4500;
/** web-llm's ModelType.embedding. */
export const EMBEDDING_MODEL_TYPE = 1;

export interface ListedModel {
  id: string;
  vramMB: number | null;
  context: number | null;
  embedding: boolean;
}

/** An entry of GET /v1/sessions/models (worker/offered-models.js). */
interface Offered {
  model: string;
  gguf?: string;
  mlc?: { url: string; lib: string };
}

/** Of web-llm's `prebuiltAppConfig.model_list`, the chat and embedding models this GPU runs. */
export function modelsThatFit(modelList: ModelRecord[], { shaderF16 }: { shaderF16: boolean }): ListedModel[] {
  return modelList
    .filter((r) => !r.model_type || r.model_type === EMBEDDING_MODEL_TYPE) // 0/undefined: LLM; vision models are not served here
    .filter((r): r is ModelRecord & { vram_required_MB: number } => typeof r.vram_required_MB === "number" && r.vram_required_MB <= MAX_LISTED_MB)
    .filter((r) => shaderF16 || runsWithout16BitShaders(r))
    .sort((a, b) => Number(isEmbeddingModel(a)) - Number(isEmbeddingModel(b)) || a.vram_required_MB - b.vram_required_MB)
    .map(listed);
}

/**
 * web-llm's app config with the deployment's self-hosted records (the entries with `mlc`) first: their
 * URLs absolute (web-llm's cleanModelUrl calls `new URL()` without a base), a prebuilt record of the
 * same id replaced by them (its other fields kept: context window, required features, model type), the
 * rest of the prebuilt list after them. `records`: the deployment's, in its order.
 */
export function withDeploymentRecords(prebuilt: AppConfig, offered: readonly Offered[], base: string): { appConfig: AppConfig; records: ModelRecord[] } {
  const records: ModelRecord[] = [];
  const ids = new Set<string>();
  for (const { model, mlc } of offered) {
    if (!mlc || ids.has(model)) continue;
    ids.add(model);
    const own = prebuilt.model_list.find((r) => r.model_id === model);
    records.push({ ...own, model_id: model, model: new URL(mlc.url, base).href, model_lib: new URL(mlc.lib, base).href });
  }
  return { appConfig: { ...prebuilt, model_list: [...records, ...prebuilt.model_list.filter((r) => !ids.has(r.model_id))] }, records };
}

/** The deployment's records this GPU runs, in the deployment's order, and the ids of those that need 16-bit shaders it lacks. */
export function deploymentModels(records: ModelRecord[], { shaderF16 }: { shaderF16: boolean }): { fit: ListedModel[]; needF16: string[] } {
  const runs = records.filter((r) => shaderF16 || runsWithout16BitShaders(r));
  return { fit: runs.map(listed), needF16: records.filter((r) => !runs.includes(r)).map((r) => r.model_id) };
}

export function isEmbeddingModel(record: ModelRecord | undefined): boolean {
  return record?.model_type === EMBEDDING_MODEL_TYPE;
}

const runsWithout16BitShaders = (r: ModelRecord) => !/q\d+f16/.test(r.model_id) && !(r.required_features ?? []).includes("shader-f16");

const listed = (r: ModelRecord): ListedModel => ({
  id: r.model_id,
  vramMB: typeof r.vram_required_MB === "number" ? Math.round(r.vram_required_MB) : null,
  context: r.overrides?.context_window_size ?? null,
  embedding: isEmbeddingModel(r),
});
