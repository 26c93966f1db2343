// The llama.cpp engine: a GGUF file (the very file the team's llama-servers run) in WebAssembly with
// wllama. WebGPU when the adapter has shader-f16 (llama.cpp's WebGPU backend needs it, and wllama
// falls back to the CPU silently without it, so the page decides and says which), else the CPU:
// threaded when the page is cross-origin isolated (SharedArrayBuffer), else one thread. The wasm and
// its JS are static assets under /vendor/wllama/, fetched only when this engine is chosen.
import { threadsFor, wllamaParams } from "./wllama-request.ts";

const WLLAMA_URL = "/vendor/wllama/index.js";
const WASM_URL = "/vendor/wllama/wllama.wasm";
/** The context each request may fill, at most the model's own (a tab's memory is the limit). */
export const DEFAULT_CONTEXT = 4096;

/**
 * Where the GGUF comes from: a URL the page can fetch with CORS, or a file the person opened.
 * @typedef {{ url: string } | { file: File }} GgufSource
 */

/**
 * Loads `source` with wllama and returns it as an Engine.
 * @param {object} options
 * @param {string} options.model the id the page announces for it
 * @param {GgufSource} options.source
 * @param {{ shaderF16: boolean, adapter: string }} options.gpu what the capability check found
 * @param {number} [options.threads] CPU threads (default: threadsFor the page)
 * @param {import("./engine.js").OnProgress} [options.onProgress]
 * @returns {Promise<import("./engine.js").Engine>}
 */
export async function loadWllamaEngine({ model, source, gpu, threads, onProgress }) {
  /** @type {typeof import("/vendor/wllama/index.js")} */
  const { Wllama } = await import(/* @vite-ignore */ WLLAMA_URL);
  const quiet = () => {};
  const wllama = new Wllama({ default: WASM_URL }, { suppressNativeLog: true, logger: { debug: quiet, log: quiet, warn: console.warn, error: console.error } });
  const gpuLayers = gpu.shaderF16 ? 999 : 0;
  const nThreads = threads ?? threadsFor({ crossOriginIsolated: globalThis.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency });
  const params = { n_ctx: DEFAULT_CONTEXT, n_threads: nThreads, n_gpu_layers: gpuLayers };
  onProgress?.(0, "Fetching the GGUF file…");
  if ("file" in source) {
    await wllama.loadModel([source.file], params);
  } else {
    /** @param {{ loaded: number, total: number }} p */
    const progressCallback = ({ loaded, total }) => onProgress?.(total ? loaded / total : 0, `Fetching the GGUF file: ${mb(loaded)} of ${total ? mb(total) : "?"} MB`);
    await wllama.loadModelFromUrl(source.url, { ...params, useCache: false, progressCallback });
  }
  const info = wllama.getLoadedContextInfo();
  const running = wllama.isMultithread() ? nThreads : 1;
  const backend = gpuLayers ? `WebGPU, ${gpu.adapter || "an unnamed GPU"}` : `CPU, ${running} ${running === 1 ? "thread" : "threads"}`;
  onProgress?.(1, `Loaded with llama.cpp (${backend}).`);
  return {
    kind: "llama.cpp",
    model,
    backend,
    contextWindow: info.n_ctx,
    embedding: false,
    completions: true,
    embed: null,
    async generate(endpoint, body, signal) {
      const params = { ...wllamaParams(body), abortSignal: signal };
      const chunks = endpoint === "completions" ? await wllama.createCompletion(/** @type {never} */ (params)) : await wllama.createChatCompletion(/** @type {never} */ (params));
      return untilAborted(/** @type {AsyncIterable<import("./engine.js").ChunkData>} */ (/** @type {unknown} */ (chunks)), signal);
    },
    unload: () => wllama.exit(),
  };
}

/** @param {number} bytes */
const mb = (bytes) => (bytes / 1e6).toFixed(1);

/**
 * The chunks until the end, or until `signal` aborts: wllama rejects an aborted completion with an
 * AbortError within a few ms; the Engine contract ends the iterator instead.
 * @param {AsyncIterable<import("./engine.js").ChunkData>} chunks
 * @param {AbortSignal} signal
 * @returns {AsyncIterable<import("./engine.js").ChunkData>}
 */
async function* untilAborted(chunks, signal) {
  try {
    yield* chunks;
  } catch (e) {
    if (!signal.aborted) throw e;
  }
}
