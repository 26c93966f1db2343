// The web-llm engine: an MLC-compiled model on WebGPU, in a dedicated module Web Worker
// (/web-llm-thread.js) so generation never blocks the page. web-llm itself is a static asset at
// /vendor/web-llm/index.js, imported only when the page needs it.
import { isEmbeddingModel } from "../models.ts";

/**
 * Loads web-llm model `model` and returns it as an Engine.
 * @param {object} options
 * @param {typeof import("@mlc-ai/web-llm")} options.webllm the loaded module
 * @param {string} options.model a model id of `appConfig`'s list
 * @param {import("@mlc-ai/web-llm").AppConfig} [options.appConfig] web-llm's list with the deployment's
 *   self-hosted records (models.ts, withDeploymentRecords); default: its prebuilt list
 * @param {string} options.adapter the GPU adapter's name, for `backend`
 * @param {import("./engine.js").OnProgress} [options.onProgress]
 * @returns {Promise<import("./engine.js").Engine>}
 */
export async function loadWebLlmEngine({ webllm, model, appConfig = webllm.prebuiltAppConfig, adapter, onProgress }) {
  const worker = new Worker("/web-llm-thread.js", { type: "module" });
  /** @param {import("@mlc-ai/web-llm").InitProgressReport} r */
  const initProgressCallback = (r) => onProgress?.(r.progress, r.text);
  let engine;
  try {
    engine = await webllm.CreateWebWorkerMLCEngine(worker, model, { initProgressCallback, appConfig });
  } catch (e) {
    worker.terminate();
    throw e;
  }
  const record = appConfig.model_list.find((r) => r.model_id === model);
  const embedding = isEmbeddingModel(record);
  const window = record?.overrides?.context_window_size;
  /** The request running now: web-llm's interrupt is engine-wide, so only its abort may raise it. */
  return {
    kind: "web-llm",
    model,
    backend: `WebGPU, ${adapter || "an unnamed GPU"}`,
    contextWindow: typeof window === "number" ? window : null,
    embedding,
    // Chat models also serve /v1/completions (engine.completions); an embedding model only embeddings.
    completions: !embedding,
    embed: embedding ? async (body) => /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (await engine.embeddings.create(/** @type {never} */ (body)))) : null,
    async generate(endpoint, body, signal) {
      const chunks = endpoint === "completions" ? await engine.completions.create(/** @type {never} */ (body)) : await engine.chat.completions.create(/** @type {never} */ (body));
      // An interrupt makes web-llm finish with `finish_reason: "abort"`; the stream must still be read
      // to its end, which releases web-llm's lock (docs/relay-protocol.md §4).
      const stop = () => engine.interruptGenerate();
      if (signal.aborted) stop();
      signal.addEventListener("abort", stop, { once: true });
      return /** @type {AsyncIterable<import("./engine.js").ChunkData>} */ (/** @type {unknown} */ (chunks));
    },
    async unload() {
      await engine.unload().catch(() => {});
      worker.terminate();
    },
  };
}
