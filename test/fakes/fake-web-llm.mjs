// A stand-in for @mlc-ai/web-llm 0.2.86 (no model weights exist on the test machines). It reproduces
// what Switchyard relies on, as described in ../shared/reference/web-llm.md §5, §6 and §9:
// - chunks: `role` on every delta chunk, an empty `content` chunk, `logprobs: null` on deltas, a final
//   chunk with an empty delta and no `logprobs` key, a `usage` chunk (choices: []) only with
//   include_usage, ids without the `chatcmpl-` prefix, no [DONE];
// - one generation at a time (FIFO lock); `interruptGenerate()` is engine-wide, checked before each
//   decode step, ends with finish_reason "abort", and is cleared when the next request takes the lock;
//   an abandoned iterator keeps the lock until it is drained or `return()`ed;
// - request checks and error names (ModelNotLoadedError, SpecifiedModelNotFoundError,
//   SystemMessageOrderError, UnsupportedRoleError, ContentTypeError, MessageOrderError,
//   ContextWindowSizeExceededError, ModelNotFoundError);
// - `completions.create` (text_completion chunks: `{text, finish_reason, index, logprobs}`, a final
//   chunk with `text: ""`, the usage chunk with `choices: []`; suffix/user/best_of rejected with
//   UnsupportedFieldsError) and `embeddings.create` (only with a record whose `model_type` is 1
//   (ModelType.embedding), e.g. snowflake-arctic-embed; an LLM loaded gives IncorrectPipelineLoadedError,
//   and chat on an embedding model too; `{object:"list", data:[{embedding, index, object:"embedding"}],
//   model, usage:{prompt_tokens, total_tokens, extra:{prefill_tokens_per_s}}}`).
// Usable in Node, workerd and the browser (Playwright serves it in place of the vendored module).

/**
 * A web-llm model record, as much of it as the fake reads.
 * @typedef {{ model_id: string, vram_required_MB?: number, required_features?: string[], overrides?: { context_window_size?: number }, model_type?: number }} ModelRecord
 * @typedef {{ model_list: ModelRecord[] }} AppConfig
 * @typedef {(report: { progress: number, timeElapsed: number, text: string }) => void} InitProgressCallback
 */

/**
 * The request fields the fake reads, as the relay passes web-llm's requests on (other fields are
 * ignored, as web-llm ignores them).
 * @typedef {{ model?: string | null, stream?: boolean | null, stream_options?: { include_usage?: boolean } | null, max_tokens?: number | null, n?: number | null }} RequestCommon
 * @typedef {RequestCommon & { messages?: Array<{ role: string, content?: unknown }> }} ChatRequest
 * @typedef {RequestCommon & { prompt?: unknown }} CompletionRequest
 * @typedef {{ model?: string | null, input: string | number[] | Array<string | number[]>, encoding_format?: string | null }} EmbeddingRequest
 */

/** @type {AppConfig} */
export const prebuiltAppConfig = {
  model_list: [
    { model_id: "SmolLM2-360M-Instruct-q4f16_1-MLC", vram_required_MB: 376.06, required_features: ["shader-f16"], overrides: { context_window_size: 4096 } },
    { model_id: "SmolLM2-360M-Instruct-q4f32_1-MLC", vram_required_MB: 579.61, overrides: { context_window_size: 4096 } },
    { model_id: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", vram_required_MB: 1060.2, overrides: { context_window_size: 4096 } },
    { model_id: "snowflake-arctic-embed-s-q0f32-MLC-b4", vram_required_MB: 238.71, model_type: 1 },
    { model_id: "snowflake-arctic-embed-m-q0f32-MLC-b4", vram_required_MB: 539.4, model_type: 1 },
  ],
};

/**
 * @param {string} name
 * @param {string} message
 */
function webLlmError(name, message) {
  const e = new Error(message);
  e.name = name;
  return e;
}

/**
 * The reply the fake gives: the text after "echo:" in the last user message, else a fixed sentence.
 * @param {Array<{ role: string, content?: unknown }>} messages
 */
export function fakeReply(messages) {
  const last = [...messages].reverse().find((m) => m.role === "user");
  const text = typeof last?.content === "string" ? last.content : "";
  const at = text.indexOf("echo:");
  return at >= 0 ? text.slice(at + 5).trim() : "Hello from the fake engine.";
}

/**
 * A deterministic unit vector for a text (the same text always gives the same embedding).
 * @param {string} text
 * @param {number} dims
 */
export function fakeEmbedding(text, dims) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  const v = [];
  for (let i = 0; i < dims; i++) {
    h = Math.imul(h ^ (h >>> 15), 2246822507) >>> 0;
    v.push((h / 4294967296) * 2 - 1);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/**
 * Splits text into token-like pieces (a word with its leading space).
 * @param {string} text
 */
export function fakeTokens(text) {
  return text.match(/\s*\S+/g) ?? [];
}

/**
 * An embedding input that is one token array (rather than a list of inputs).
 * @param {EmbeddingRequest["input"]} input
 * @returns {input is number[]}
 */
const isTokenArray = (input) => Array.isArray(input) && typeof input[0] === "number";

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class FakeEngine {
  /**
   * @param {{ tokenDelayMs?: number, contextWindow?: number, appConfig?: AppConfig, initProgressCallback?: InitProgressCallback }} [options]
   */
  constructor({ tokenDelayMs = 0, contextWindow = 4096, appConfig = prebuiltAppConfig, initProgressCallback } = {}) {
    this.tokenDelayMs = tokenDelayMs;
    this.contextWindow = contextWindow;
    this.appConfig = appConfig;
    this.initProgressCallback = initProgressCallback;
    /** @type {string | null} */
    this.loaded = null;
    this.interruptSignal = false;
    /** @type {Promise<void>} */
    this.lockTail = Promise.resolve();
    /**
     * Every request that passed the checks, oldest first.
     * @type {Array<ChatRequest | CompletionRequest | EmbeddingRequest>}
     */
    this.requests = [];
    this.chat = { completions: { create: (/** @type {ChatRequest} */ req) => this.create(req) } };
    this.completions = { create: (/** @type {CompletionRequest} */ req) => this.createCompletion(req) };
    this.embeddings = { create: (/** @type {EmbeddingRequest} */ req) => this.embedding(req) };
  }

  /** @param {InitProgressCallback} cb */
  setInitProgressCallback(cb) {
    this.initProgressCallback = cb;
  }

  /** @param {string | string[]} modelId */
  async reload(modelId) {
    const id = Array.isArray(modelId) ? modelId[0] : modelId;
    if (!this.appConfig.model_list.some((r) => r.model_id === id)) {
      throw webLlmError("ModelNotFoundError", `Cannot find model record in appConfig for ${id}. Please check if the model ID is correct and included in the model_list configuration.`);
    }
    const N = 4;
    /**
     * @param {number} progress
     * @param {string} text
     */
    const report = (progress, text) => this.initProgressCallback?.({ progress, timeElapsed: 0, text });
    report(0, "Start to fetch params");
    for (let i = 1; i <= N; i++) {
      await sleep(this.tokenDelayMs);
      report((i / N) * 0.9, `Fetching param cache[${i}/${N}]: ${i * 30}MB fetched. ${Math.round((i / N) * 100)}% completed, 0 secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster.`);
    }
    report(0.95, `Loading GPU shader modules[1/1]: 100% completed, 0 secs elapsed.`);
    this.loaded = id;
    report(1, "Finish loading on WebGPU - google");
  }

  async unload() {
    this.loaded = null;
  }

  interruptGenerate() {
    this.interruptSignal = true;
  }

  async resetChat() {}

  async getGPUVendor() {
    return "google";
  }

  isEmbeddingModel(id = this.loaded) {
    return this.appConfig.model_list.find((r) => r.model_id === id)?.model_type === 1;
  }

  /**
   * The loaded model's id, or the error web-llm throws for `req`.
   * @param {{ model?: string | null }} req
   * @param {string} requestName
   * @param {boolean} wantEmbedding
   * @returns {string}
   */
  checkLoaded(req, requestName, wantEmbedding) {
    if (!this.loaded) throw webLlmError("ModelNotLoadedError", "Model not loaded before trying to complete ChatCompletionRequest. Please ensure you have called `MLCEngine.reload(model)` to load the model before initiating chat operations, or initialize your engine using `CreateMLCEngine()` with a valid model configuration.");
    if (req.model != null && req.model !== this.loaded) throw webLlmError("SpecifiedModelNotFoundError", `Specified model ${req.model} is not found in loaded models. Loaded models: ${this.loaded}`);
    if (this.isEmbeddingModel() !== wantEmbedding) {
      throw webLlmError("IncorrectPipelineLoadedError", `${requestName} expects model to be loaded with ${wantEmbedding ? "EmbeddingPipeline" : "LLMChatPipeline"}. However, ${this.loaded} is not loaded with this pipeline.`);
    }
    return this.loaded;
  }

  /**
   * The prompt's token count, or the error web-llm throws for `req`.
   * @param {ChatRequest} req
   */
  check(req) {
    this.checkLoaded(req, "ChatCompletionRequest", false);
    if (req.stream_options && !req.stream) throw webLlmError("InvalidStreamOptionsError", "Only specify stream_options when stream=True.");
    if (req.max_tokens != null && !(req.max_tokens > 0)) throw webLlmError("MinValueError", "Make sure `max_tokens` > 0.");
    const msgs = req.messages ?? [];
    msgs.forEach((m, i) => {
      if (!["system", "user", "assistant", "tool"].includes(m.role)) throw webLlmError("UnsupportedRoleError", `Unsupported role of message: ${m.role}`);
      if (m.role === "system" && i !== 0) throw webLlmError("SystemMessageOrderError", "System prompt should always be the first message in `messages`.");
      if (m.role === "assistant" && typeof m.content !== "string") throw webLlmError("ContentTypeError", "Last messages should be a string from the `user`.");
      if (m.role === "user" && typeof m.content !== "string") throw webLlmError("UserMessageContentErrorForNonVLM", "The model loaded is not of type ModelType.VLM (vision-language model). Therefore, user message only supports string content, but received: " + JSON.stringify(m.content));
    });
    const last = msgs[msgs.length - 1];
    if (!last || (last.role !== "user" && last.role !== "tool")) throw webLlmError("MessageOrderError", "Last message should be from `user` or `tool`.");
    const promptTokens = msgs.reduce((n, m) => n + fakeTokens(String(m.content ?? "")).length + 4, 0);
    if (promptTokens > this.contextWindow) {
      throw webLlmError("ContextWindowSizeExceededError", `Prompt tokens exceed context window size: number of prompt tokens: ${promptTokens}; context window size: ${this.contextWindow}\nConsider shortening the prompt, or increase \`context_window_size\`, or using sliding window via \`sliding_window_size\`.`);
    }
    return promptTokens;
  }

  /** @param {ChatRequest} req */
  async create(req) {
    const promptTokens = this.check(req);
    this.requests.push(req);
    if (!req.stream) throw webLlmError("Error", "the fake engine only streams");
    return this.generate(req, promptTokens);
  }

  /** @param {CompletionRequest} req */
  async createCompletion(req) {
    this.checkLoaded(req, "CompletionCreateParams", false);
    const unsupported = ["suffix", "user", "best_of"].filter((f) => f in req);
    if (unsupported.length) throw webLlmError("UnsupportedFieldsError", `The following fields in CompletionCreateParams are not yet supported: \n${unsupported.join(", ")}`);
    if (req.stream && req.n && req.n > 1) throw webLlmError("StreamingCountError", "When streaming, `n` cannot be > 1.");
    if (req.stream_options && !req.stream) throw webLlmError("InvalidStreamOptionsError", "Only specify stream_options when stream=True.");
    if (req.max_tokens != null && !(req.max_tokens > 0)) throw webLlmError("MinValueError", "Make sure `max_tokens` > 0.");
    const promptTokens = fakeTokens(String(req.prompt ?? "")).length;
    if (promptTokens > this.contextWindow) {
      throw webLlmError("ContextWindowSizeExceededError", `Prompt tokens exceed context window size: number of prompt tokens: ${promptTokens}; context window size: ${this.contextWindow}\nConsider shortening the prompt, or increase \`context_window_size\`, or using sliding window via \`sliding_window_size\`.`);
    }
    this.requests.push(req);
    if (!req.stream) throw webLlmError("Error", "the fake engine only streams");
    return this.generate(req, promptTokens, "text_completion");
  }

  /** @param {EmbeddingRequest} req */
  async embedding(req) {
    const loaded = this.checkLoaded(req, "EmbeddingCreateParams", true);
    const unsupported = ["dimensions", "user"].filter((f) => f in req);
    if (unsupported.length) throw webLlmError("UnsupportedFieldsError", `The following fields in EmbeddingCreateParams are not yet supported: \n${unsupported.join(", ")}`);
    if (req.encoding_format == "base64") throw webLlmError("EmbeddingUnsupportedEncodingFormatError", "Embedding in base64 format is currently not supported.");
    const input = req.input;
    const empty = () => webLlmError("EmbeddingInputEmptyError", "Embedding input cannot be empty string or empty token array.");
    if (typeof input === "string" ? input === "" : input.length === 0 || input.some((x) => typeof x !== "number" && x.length === 0)) throw empty();
    const inputs = typeof input === "string" || isTokenArray(input) ? [input] : input;
    this.requests.push(req);
    // One embedding request at a time on the model's lock, like a generation.
    /** @type {() => void} */
    let unlock = () => {};
    const prev = this.lockTail;
    this.lockTail = new Promise((r) => (unlock = r));
    await prev;
    try {
      await sleep(this.tokenDelayMs);
      let promptTokens = 0;
      const data = inputs.map((x, index) => {
        const text = typeof x === "string" ? x : x.join(" ");
        promptTokens += typeof x === "string" ? fakeTokens(x).length : x.length;
        return { embedding: fakeEmbedding(text, loaded.includes("-m-") ? 768 : 384), index, object: "embedding" };
      });
      return { data, model: loaded, object: "list", usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, extra: { prefill_tokens_per_s: promptTokens / 0.01 } } };
    } finally {
      unlock();
    }
  }

  /**
   * @param {ChatRequest & CompletionRequest} req
   * @param {number} promptTokens
   * @param {"chat.completion.chunk" | "text_completion"} [object]
   */
  async *generate(req, promptTokens, object = "chat.completion.chunk") {
    // FIFO lock: one generation at a time; taking it clears a stale interrupt.
    /** @type {() => void} */
    let unlock = () => {};
    const prev = this.lockTail;
    this.lockTail = new Promise((r) => (unlock = r));
    await prev;
    this.interruptSignal = false;
    try {
      const id = crypto.randomUUID();
      const created = Math.floor(Date.now() / 1000);
      const model = this.loaded;
      const base = { id, model, object, created };
      const text = object === "text_completion";
      const delta = (/** @type {string} */ content) => (text ? { text: content, finish_reason: null, index: 0, logprobs: null } : { delta: { content, role: "assistant" }, finish_reason: null, index: 0, logprobs: null });
      const tokens = fakeTokens(text ? fakeReply([{ role: "user", content: String(req.prompt ?? "") }]) : fakeReply(req.messages ?? []));
      const max = req.max_tokens ?? Infinity;
      const t0 = Date.now();
      await sleep(this.tokenDelayMs); // prefill (not interruptible)
      const ttft = (Date.now() - t0) / 1000;
      let finish = "stop";
      let produced = 0;
      // The first delta right after prefill: empty, as when a token ends in an incomplete UTF-8 sequence.
      yield { ...base, choices: [delta("")] };
      for (const content of tokens) {
        if (this.interruptSignal) {
          finish = "abort";
          break;
        }
        if (produced >= max) {
          finish = "length";
          break;
        }
        await sleep(this.tokenDelayMs);
        produced++;
        yield { ...base, choices: [delta(content)] };
      }
      if (finish === "stop" && this.interruptSignal) finish = "abort";
      yield { ...base, choices: [text ? { text: "", finish_reason: finish, index: 0 } : { delta: {}, finish_reason: finish, index: 0 }] };
      if (req.stream_options?.include_usage) {
        const e2e = (Date.now() - t0) / 1000 || 0.001;
        yield {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: produced,
            total_tokens: promptTokens + produced,
            extra: {
              e2e_latency_s: e2e,
              prefill_tokens_per_s: promptTokens / (ttft || 0.001),
              decode_tokens_per_s: produced / (e2e - ttft || 0.001),
              time_to_first_token_s: ttft,
              time_per_output_token_s: produced ? (e2e - ttft) / produced : 0,
            },
          },
        };
      }
    } finally {
      unlock();
    }
  }
}

/**
 * The page-facing factories web-llm exports, backed by the fake. A test page may set
 * `globalThis.__fakeTokenDelayMs` before loading a model.
 * @param {string | string[]} modelId
 * @param {{ initProgressCallback?: InitProgressCallback, appConfig?: AppConfig }} [engineConfig]
 */
export async function CreateMLCEngine(modelId, engineConfig = {}) {
  const { __fakeTokenDelayMs } = /** @type {{ __fakeTokenDelayMs?: number }} */ (globalThis);
  const engine = new FakeEngine({ tokenDelayMs: __fakeTokenDelayMs ?? 20, initProgressCallback: engineConfig.initProgressCallback, appConfig: engineConfig.appConfig ?? prebuiltAppConfig });
  await engine.reload(modelId);
  return engine;
}

/**
 * @param {unknown} _worker
 * @param {string | string[]} modelId
 * @param {{ initProgressCallback?: InitProgressCallback, appConfig?: AppConfig }} [engineConfig]
 */
export async function CreateWebWorkerMLCEngine(_worker, modelId, engineConfig = {}) {
  return CreateMLCEngine(modelId, engineConfig);
}

export class WebWorkerMLCEngineHandler {
  onmessage() {}
}

export async function hasModelInCache() {
  return false;
}

export async function deleteModelAllInfoInCache() {}
