// Which of web-llm's prebuilt models to offer: chat models smallest first, then its embedding models
// (model_type 1, e.g. snowflake-arctic-embed: they serve /v1/embeddings only), q4f32 when the GPU has
// no shader-f16 (f16 records that do not declare the feature may still fail to compile there).

export const MAX_LISTED_MB = 4500;
/** web-llm's ModelType.embedding. */
export const EMBEDDING_MODEL_TYPE = 1;

/** @typedef {import("@mlc-ai/web-llm").ModelRecord} ModelRecord */

/**
 * @param {ModelRecord[]} modelList web-llm's `prebuiltAppConfig.model_list`
 * @param {{ shaderF16: boolean }} gpu
 * @returns {Array<{ id: string, vramMB: number, context: number | null, embedding: boolean }>}
 */
export function modelsThatFit(modelList, { shaderF16 }) {
  return modelList
    .filter((r) => !r.model_type || r.model_type === EMBEDDING_MODEL_TYPE) // 0/undefined: LLM; vision models are not served here
    .filter(/** @returns {r is ModelRecord & { vram_required_MB: number }} */ (r) => typeof r.vram_required_MB === "number" && r.vram_required_MB <= MAX_LISTED_MB)
    .filter((r) => shaderF16 || (!/q\d+f16/.test(r.model_id) && !(r.required_features ?? []).includes("shader-f16")))
    .sort((a, b) => Number(isEmbeddingModel(a)) - Number(isEmbeddingModel(b)) || a.vram_required_MB - b.vram_required_MB)
    .map((r) => ({ id: r.model_id, vramMB: Math.round(r.vram_required_MB), context: r.overrides?.context_window_size ?? null, embedding: isEmbeddingModel(r) }));
}

/** @param {ModelRecord | undefined} record */
export function isEmbeddingModel(record) {
  return record?.model_type === EMBEDDING_MODEL_TYPE;
}
