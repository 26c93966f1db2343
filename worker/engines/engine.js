// The one interface every engine on the page serves through (web-llm-engine.js: MLC models on WebGPU;
// wllama-engine.js: GGUF files with llama.cpp in WebAssembly). The session client (serve.js) and the
// chat box only speak this: the relay never knows which engine answers.

/**
 * A loaded model, ready to generate.
 * @typedef {object} Engine
 * @property {"web-llm" | "llama.cpp"} kind which engine runs it
 * @property {string} model the model id it serves (announced in `hello`)
 * @property {string} backend what really runs it, in words ("WebGPU, google swiftshader", "CPU, 2 threads")
 * @property {number | null} contextWindow the most tokens one request can hold, when known
 * @property {boolean} embedding an embedding model: it serves only `embeddings`
 * @property {boolean} completions it serves `endpoint: "completions"` (raw text completions)
 * @property {(endpoint: "chat" | "completions", body: Record<string, unknown>, signal: AbortSignal) => Promise<AsyncIterable<ChunkData>>} generate
 *   streams the answer to a relay body as OpenAI-style chunks (the last one carries `usage`). An
 *   aborted `signal` stops the generation: the iterator then ends (it never throws for an abort).
 * @property {((body: Record<string, unknown>) => Promise<Record<string, unknown>>) | null} embed the whole embeddings answer
 * @property {() => Promise<void>} unload frees the model (and its thread)
 */

/**
 * One chunk as an engine yields it: `chat.completion.chunk` or `text_completion`, maybe with `usage`
 * (web-llm: `usage.extra` timings; llama.cpp: top-level `timings`, as llama-server sends them).
 * @typedef {{ object?: string, choices?: Array<{ delta?: { content?: string | null }, text?: string, finish_reason?: string | null }>, usage?: { prompt_tokens?: number, completion_tokens?: number, extra?: Record<string, unknown> } | null, timings?: Record<string, number> }} ChunkData
 */

/**
 * Loading progress for the page: a share done (0..1) and a sentence.
 * @typedef {(progress: number, text: string) => void} OnProgress
 */

/**
 * The decode speed an answer's last chunk reports, in tokens per second, or null.
 * @param {ChunkData | null} last the chunk that carried `usage`
 * @returns {number | null}
 */
export function decodeRate(last) {
  const rate = last?.timings?.predicted_per_second ?? last?.usage?.extra?.decode_tokens_per_s;
  return typeof rate === "number" && Number.isFinite(rate) && rate > 0 ? rate : null;
}
