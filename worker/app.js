// The Switchyard page: check WebGPU, pick a model that fits, load it with real progress (web-llm in a
// module Web Worker), chat with it, and serve it for the team through the relay.
import { checkWebGPU } from "./capabilities.js";
import { describeError } from "./describe-error.js";
import { isEmbeddingModel, modelsThatFit } from "./models.js";
import { ServeSession } from "./serve.js";

const WEB_LLM_URL = "/vendor/web-llm/index.js";

/**
 * The page's elements by id (public/index.html).
 * @typedef {{
 *   "gpu": HTMLElement, "gpu-sentences": HTMLDivElement, "models-panel": HTMLElement, "model": HTMLSelectElement,
 *   "models-note": HTMLParagraphElement, "custom-model": HTMLInputElement, "load": HTMLButtonElement,
 *   "progress": HTMLProgressElement, "progress-text": HTMLParagraphElement, "load-error": HTMLParagraphElement,
 *   "loaded": HTMLParagraphElement, "chat": HTMLElement, "log": HTMLDivElement, "chat-form": HTMLFormElement,
 *   "prompt": HTMLTextAreaElement, "serve-panel": HTMLElement, "serve": HTMLInputElement,
 *   "serve-status": HTMLParagraphElement, "stat-served": HTMLElement, "stat-rate": HTMLElement, "stat-queue": HTMLElement,
 * }} Elements
 */

/**
 * @template {keyof Elements} Id
 * @param {Id} id
 */
const $ = (id) => /** @type {Elements[Id]} */ (document.getElementById(id));

/**
 * @type {{
 *   webllm: typeof import("@mlc-ai/web-llm") | null,
 *   engine: import("@mlc-ai/web-llm").MLCEngineInterface | null,
 *   model: string | null,
 *   embedding: boolean,
 *   context: number | null,
 *   caps: import("./capabilities.js").WebGPUCheck | null,
 *   session: ServeSession | null,
 *   history: import("@mlc-ai/web-llm").ChatCompletionMessageParam[],
 * }}
 */
const state = { webllm: null, engine: null, model: null, embedding: false, context: null, caps: null, session: null, history: [] };

function serveToken() {
  const m = /(?:^|[#&])serve=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem("switchyard.serve", decodeURIComponent(m[1] ?? ""));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem("switchyard.serve");
}

/**
 * @param {keyof Elements} id
 * @param {string} text
 * @param {string} [cls] its new class list
 */
function show(id, text, cls) {
  const el = $(id);
  el.textContent = text;
  if (cls !== undefined) el.className = cls;
}

async function main() {
  const caps = await checkWebGPU();
  state.caps = caps;
  const list = $("gpu-sentences");
  list.replaceChildren(...caps.sentences.map((s) => Object.assign(document.createElement("p"), { textContent: s })));
  $("gpu").className = caps.ok ? "panel ok" : "panel bad";
  if (!caps.ok) {
    $("models-panel").hidden = true;
    return;
  }
  /** @type {typeof import("@mlc-ai/web-llm")} */
  let webllm;
  try {
    webllm = state.webllm = await import(WEB_LLM_URL);
  } catch (e) {
    show("models-note", `The web-llm library could not be loaded (${e instanceof Error ? e.message : e}). Run npm install, then reload.`, "error");
    return;
  }
  const models = modelsThatFit(webllm.prebuiltAppConfig.model_list, caps);
  const select = $("model");
  select.replaceChildren(
    ...models.map((m) => Object.assign(document.createElement("option"), { value: m.id, textContent: `${m.id}${m.embedding ? " (embeddings only)" : ""} — needs about ${m.vramMB} MB of GPU memory` })),
  );
  show("models-note", `${models.length} models fit this GPU, smallest first. The first load downloads the weights once; later loads come from the browser cache.`);
  $("load").disabled = false;
}

async function load() {
  const webllm = state.webllm;
  if (!webllm) return; // the button is enabled once web-llm has loaded
  const custom = $("custom-model").value.trim();
  const id = custom || $("model").value;
  $("load").disabled = true;
  show("load-error", "");
  show("progress-text", `Preparing ${id}…`);
  $("progress").value = 0;
  try {
    /** @param {import("@mlc-ai/web-llm").InitProgressReport} r */
    const onProgress = (r) => {
      $("progress").value = r.progress;
      show("progress-text", r.text);
    };
    if (state.engine) {
      state.session?.stop();
      await state.engine.unload?.();
      state.engine.setInitProgressCallback?.(onProgress);
      await state.engine.reload(id);
    } else {
      const worker = new Worker("/web-llm-thread.js", { type: "module" });
      state.engine = await webllm.CreateWebWorkerMLCEngine(worker, id, { initProgressCallback: onProgress });
    }
    state.model = id;
    const record = webllm.prebuiltAppConfig.model_list.find((r) => r.model_id === id);
    state.embedding = isEmbeddingModel(record);
    // The most one request can hold; the hub sends longer prompts elsewhere.
    state.context = typeof record?.overrides?.context_window_size === "number" ? record.overrides.context_window_size : null;
    state.history = [];
    $("progress").value = 1;
    show("loaded", `Loaded: ${id}${state.embedding ? " (an embedding model: it serves /v1/embeddings for the team, not chat)" : ""}`);
    $("chat").hidden = state.embedding;
    $("serve-panel").hidden = false;
    $("serve").disabled = !serveToken();
    if (!serveToken()) show("serve-status", "To serve, open the link that `npm start` printed (it carries the serve token in the part after #).");
  } catch (e) {
    show("load-error", describeError(e), "error");
    show("progress-text", "");
  } finally {
    $("load").disabled = false;
  }
}

/** @param {SubmitEvent} event */
async function send(event) {
  event.preventDefault();
  const input = $("prompt");
  const content = input.value.trim();
  if (!content || !state.engine) return;
  input.value = "";
  state.history.push({ role: "user", content });
  const log = $("log");
  log.append(Object.assign(document.createElement("div"), { className: "user", textContent: content }));
  const out = Object.assign(document.createElement("div"), { className: "assistant", textContent: "" });
  log.append(out);
  try {
    let text = "";
    for await (const chunk of await state.engine.chat.completions.create({ messages: state.history, stream: true })) {
      text += chunk.choices?.[0]?.delta?.content ?? "";
      out.textContent = text;
      log.scrollTop = log.scrollHeight;
    }
    state.history.push({ role: "assistant", content: text });
  } catch (e) {
    out.className = "assistant error";
    out.textContent = describeError(e);
    state.history.pop();
  }
}

function toggleServe() {
  if (!$("serve").checked) {
    state.session?.stop();
    return;
  }
  const { engine, model, caps } = state;
  const token = serveToken();
  if (!engine || !model || !caps || !token) return; // the checkbox is enabled once a model has loaded, with a token
  state.session = new ServeSession({
    baseUrl: location.origin,
    token,
    engine,
    model,
    capabilities: {
      shaderF16: caps.shaderF16,
      adapter: `${caps.adapter?.vendor ?? ""} ${caps.adapter?.architecture ?? ""}`.trim(),
      maxBufferSize: caps.limits.maxBufferSize,
      // Chat models also serve /v1/completions (engine.completions); an embedding model serves only /v1/embeddings.
      completions: !state.embedding,
      ...(state.embedding ? { embeddingModels: [model] } : {}),
      ...(state.context ? { contextWindows: { [model]: state.context } } : {}),
    },
    onChange: (s) => {
      show("serve-status", s.message, `status ${s.state}`);
      show("stat-served", String(s.served));
      show("stat-rate", s.tokensPerSecond == null ? "–" : s.tokensPerSecond.toFixed(1));
      show("stat-queue", `${s.running ? 1 : 0} running, ${s.waiting} waiting`);
      if (s.state === "refused") $("serve").checked = false;
    },
  });
  state.session.start();
}

$("load").addEventListener("click", load);
$("chat-form").addEventListener("submit", send);
$("serve").addEventListener("change", toggleServe);
serveToken();
main().catch((e) => show("models-note", describeError(e), "error"));
