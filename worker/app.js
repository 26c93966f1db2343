// The Switchyard page: check WebGPU, offer the models this browser can run (the deployment's GGUF
// files with llama.cpp in WebAssembly, its self-hosted web-llm models and web-llm's own on WebGPU, or
// a local .gguf file), load one with real progress, chat with it, and serve it for the team through
// the relay. The engines sit behind one interface (engines/engine.js); the session client never knows
// which one answers.
import { checkWebGPU } from "./capabilities.js";
import { describeError } from "./describe-error.ts";
import { deploymentModels, modelsThatFit, withDeploymentRecords } from "./models.ts";
import { ServeSession } from "./serve.js";
import { readServeLink } from "./serve-link.ts";
import { fetchOfferedModels } from "./offered-models.js";

const WEB_LLM_URL = "/vendor/web-llm/index.js";

/**
 * The page's elements by id (public/index.html).
 * @typedef {{
 *   "gpu": HTMLElement, "gpu-sentences": HTMLDivElement, "models-panel": HTMLElement, "model": HTMLSelectElement,
 *   "models-note": HTMLParagraphElement, "custom-model": HTMLInputElement, "gguf-file": HTMLInputElement, "load": HTMLButtonElement,
 *   "progress": HTMLProgressElement, "progress-text": HTMLParagraphElement, "load-error": HTMLParagraphElement,
 *   "loaded": HTMLParagraphElement, "chat": HTMLElement, "log": HTMLDivElement, "chat-form": HTMLFormElement,
 *   "prompt": HTMLTextAreaElement, "serve-panel": HTMLElement, "serve": HTMLInputElement,
 *   "serve-status": HTMLParagraphElement, "stat-served": HTMLElement, "stat-rate": HTMLElement, "stat-queue": HTMLElement,
 *   "stat-backend": HTMLElement,
 * }} Elements
 */

/**
 * @template {keyof Elements} Id
 * @param {Id} id
 */
const $ = (id) => /** @type {Elements[Id]} */ (document.getElementById(id));

/**
 * A model the page can load: a GGUF by URL (the deployment's), or a web-llm model id.
 * @typedef {{ engine: "llama.cpp", model: string, gguf: string } | { engine: "web-llm", model: string }} Choice
 */

/**
 * @type {{
 *   webllm: typeof import("@mlc-ai/web-llm") | null,
 *   appConfig: import("@mlc-ai/web-llm").AppConfig | null,
 *   engine: import("./engines/engine.js").Engine | null,
 *   caps: import("./capabilities.js").WebGPUCheck | null,
 *   session: ServeSession | null,
 *   ggufs: Map<string, string>,
 *   rate: number | null,
 *   history: Array<{ role: "user" | "assistant", content: string }>,
 * }}
 */
const state = { webllm: null, appConfig: null, engine: null, caps: null, session: null, ggufs: new Map(), rate: null, history: [] };
const link = readServeLink(location, sessionStorage, history);

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

/** @param {string} value @param {string} text */
const option = (value, text) => Object.assign(document.createElement("option"), { value, textContent: text });

async function main() {
  const caps = await checkWebGPU();
  state.caps = caps;
  $("gpu-sentences").replaceChildren(...caps.sentences.map((s) => Object.assign(document.createElement("p"), { textContent: s })));
  $("gpu").className = caps.ok ? "panel ok" : "panel bad";
  const notes = [];
  // The deployment's GGUF models run anywhere (the CPU when WebGPU or shader-f16 is missing).
  const offered = link.token ? await fetchOfferedModels(location.origin, link.token).catch((e) => (notes.push(`The deployment's models could not be listed (${e instanceof Error ? e.message : e}).`), [])) : [];
  const groups = [];
  const ggufs = ggufRuns() ? offered.filter((m) => m.gguf) : [];
  if (!ggufRuns() && offered.some((m) => m.gguf)) notes.push(NO_GGUF);
  for (const m of ggufs) state.ggufs.set(m.model, /** @type {string} */ (m.gguf));
  if (ggufs.length) {
    const group = Object.assign(document.createElement("optgroup"), { label: "This deployment's GGUF models (llama.cpp)" });
    group.append(...ggufs.map((m) => option(m.model, `${m.model} — GGUF, runs on ${caps.shaderF16 ? "WebGPU" : "the CPU"}`)));
    groups.push(group);
    notes.push(`${ggufs.length} GGUF ${ggufs.length === 1 ? "model" : "models"} of this deployment run with llama.cpp in this tab${caps.shaderF16 ? " on WebGPU" : " on the CPU (no shader-f16 GPU here)"}.`);
  }
  if (caps.ok) {
    try {
      state.webllm = await import(WEB_LLM_URL);
    } catch (e) {
      notes.push(`The web-llm library could not be loaded (${e instanceof Error ? e.message : e}). Run npm install, then reload.`);
    }
  }
  const selfHosted = offered.filter((m) => m.mlc).map((m) => m.model);
  if (state.webllm) {
    // The deployment's self-hosted records join web-llm's list (and replace its own record of an id).
    const { appConfig, records } = withDeploymentRecords(state.webllm.prebuiltAppConfig, offered, location.href);
    state.appConfig = appConfig;
    const own = deploymentModels(records, caps);
    if (own.fit.length) {
      const group = Object.assign(document.createElement("optgroup"), { label: "This deployment's web-llm models (WebGPU)" });
      group.append(...own.fit.map((m) => option(m.id, `${m.id}${m.embedding ? " (embeddings only)" : ""} — web-llm, from this deployment's own server`)));
      groups.push(group);
      notes.push(`${own.fit.length} web-llm ${own.fit.length === 1 ? "model" : "models"} of this deployment ${own.fit.length === 1 ? "runs" : "run"} on this GPU, fetched from the team's own server.`);
    }
    if (own.needF16.length) notes.push(`${own.needF16.join(", ")} of this deployment ${own.needF16.length === 1 ? "needs" : "need"} 16-bit shaders (shader-f16), which this GPU lacks.`);
    const ownIds = new Set(records.map((r) => r.model_id));
    const models = modelsThatFit(state.webllm.prebuiltAppConfig.model_list.filter((r) => !ownIds.has(r.model_id)), caps);
    const group = Object.assign(document.createElement("optgroup"), { label: "web-llm models (WebGPU)" });
    group.append(...models.map((m) => option(m.id, `${m.id}${m.embedding ? " (embeddings only)" : ""} — needs about ${m.vramMB} MB of GPU memory`)));
    groups.push(group);
    notes.push(`${models.length} web-llm models fit this GPU, smallest first. The first load downloads the weights once; later loads come from the browser cache.`);
  } else if (selfHosted.length && !caps.ok) {
    notes.push(`This deployment's web-llm ${selfHosted.length === 1 ? "model" : "models"} (${selfHosted.join(", ")}) ${selfHosted.length === 1 ? "needs" : "need"} WebGPU, which this browser lacks.`);
  }
  $("model").replaceChildren(...groups);
  show("models-note", notes.join(" ") || "No model runs here: open a local .gguf file below.");
  $("load").disabled = false;
  if (link.model && link.start) await startFromLink(link.model);
}

/** llama.cpp's WebAssembly build needs JSPI (WebAssembly.promising) and 64-bit memory: Chrome/Edge 137+. */
const ggufRuns = () => typeof (/** @type {{ promising?: unknown }} */ (/** @type {unknown} */ (WebAssembly))).promising === "function";
const NO_GGUF = "This browser cannot run GGUF models: llama.cpp in WebAssembly needs JSPI and 64-bit memory (Chrome or Edge 137 or later).";

/**
 * `#serve=<token>&model=<id>&start=1`: load that model and serve it without a click.
 * @param {string} model
 */
async function startFromLink(model) {
  if (!state.ggufs.has(model) && !state.appConfig?.model_list.some((r) => r.model_id === model)) {
    show("load-error", `The link asks for ${model}, which this deployment does not offer to tabs and web-llm does not know; pick a model below.`, "error");
    return;
  }
  $("model").value = model;
  if (await load() && $("serve").disabled === false) {
    $("serve").checked = true;
    toggleServe();
  }
}

/** @returns {Choice | { engine: "llama.cpp", model: string, file: File } | null} */
function chosen() {
  const file = $("gguf-file").files?.[0];
  const custom = $("custom-model").value.trim();
  if (file) return { engine: "llama.cpp", model: custom || file.name.replace(/\.gguf$/i, ""), file };
  if (custom) return { engine: "web-llm", model: custom };
  const id = $("model").value;
  if (!id) return null;
  const gguf = state.ggufs.get(id);
  return gguf ? { engine: "llama.cpp", model: id, gguf } : { engine: "web-llm", model: id };
}

/** Loads the chosen model (unloading the one before). Resolves whether it loaded. */
async function load() {
  const choice = chosen();
  const caps = state.caps;
  if (!choice || !caps) return false;
  $("load").disabled = true;
  show("load-error", "");
  show("progress-text", `Preparing ${choice.model}…`);
  $("progress").value = 0;
  /** @type {import("./engines/engine.js").OnProgress} */
  const onProgress = (progress, text) => {
    $("progress").value = progress;
    show("progress-text", text);
  };
  const adapter = `${caps.adapter?.vendor ?? ""} ${caps.adapter?.architecture ?? ""}`.trim();
  try {
    state.session?.stop();
    $("serve").checked = false;
    const previous = state.engine;
    state.engine = null;
    await previous?.unload();
    if (choice.engine === "llama.cpp") {
      if (!ggufRuns()) throw new Error(NO_GGUF);
      const { loadWllamaEngine } = await import("./engines/wllama-engine.js");
      const source = "file" in choice ? { file: choice.file } : { url: new URL(choice.gguf, location.href).href };
      state.engine = await loadWllamaEngine({ model: choice.model, source, gpu: { shaderF16: caps.shaderF16, adapter }, onProgress });
    } else {
      if (!state.webllm) throw new Error("web-llm is not available in this browser (it needs WebGPU).");
      const { loadWebLlmEngine } = await import("./engines/web-llm-engine.js");
      state.engine = await loadWebLlmEngine({ webllm: state.webllm, model: choice.model, appConfig: state.appConfig ?? undefined, adapter, onProgress });
    }
    const engine = state.engine;
    state.history = [];
    state.rate = engine.kind === "llama.cpp" ? await measureRate(engine) : null;
    $("progress").value = 1;
    show("loaded", `Loaded: ${engine.model} with ${engine.kind} (${engine.backend})${engine.embedding ? " (an embedding model: it serves /v1/embeddings for the team, not chat)" : ""}`);
    show("stat-backend", `${engine.kind}, ${engine.backend}`);
    show("stat-rate", state.rate == null ? "–" : state.rate.toFixed(1));
    $("chat").hidden = engine.embedding;
    $("serve-panel").hidden = false;
    $("serve").disabled = !link.token;
    if (!link.token) show("serve-status", "To serve, open the link that `npm start` printed (it carries the serve token in the part after #).");
    return true;
  } catch (e) {
    show("load-error", describeError(e, { webLlmVersion: state.webllm?.modelVersion }), "error");
    show("progress-text", "");
    return false;
  } finally {
    $("load").disabled = false;
  }
}

/**
 * The engine's decode speed on a short warm-up answer (8 tokens), in tokens per second: the page shows
 * it and announces it, so the hub can place requests on faster targets first.
 * @param {import("./engines/engine.js").Engine} engine
 */
async function measureRate(engine) {
  const { decodeRate } = await import("./engines/engine.js");
  let last = null;
  const started = performance.now();
  let tokens = 0;
  for await (const chunk of await engine.generate("completions", { prompt: "Hello", max_tokens: 8, ignore_eos: true, temperature: 0 }, new AbortController().signal)) {
    if (chunk.usage) last = chunk;
    if (chunk.choices?.[0]?.text) tokens++;
  }
  const secs = (performance.now() - started) / 1000;
  return decodeRate(last) ?? (tokens && secs > 0 ? tokens / secs : null);
}

/** @param {SubmitEvent} event */
async function send(event) {
  event.preventDefault();
  const input = $("prompt");
  const content = input.value.trim();
  const engine = state.engine;
  if (!content || !engine) return;
  input.value = "";
  state.history.push({ role: "user", content });
  const log = $("log");
  log.append(Object.assign(document.createElement("div"), { className: "user", textContent: content }));
  const out = Object.assign(document.createElement("div"), { className: "assistant", textContent: "" });
  log.append(out);
  try {
    let text = "";
    for await (const chunk of await engine.generate("chat", { model: engine.model, messages: state.history, stream: true }, new AbortController().signal)) {
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
  const { engine, caps } = state;
  const token = link.token;
  if (!engine || !caps || !token) return; // the checkbox is enabled once a model has loaded, with a token
  const model = engine.model;
  state.session = new ServeSession({
    baseUrl: location.origin,
    token,
    engine,
    capabilities: {
      shaderF16: caps.shaderF16,
      adapter: `${caps.adapter?.vendor ?? ""} ${caps.adapter?.architecture ?? ""}`.trim(),
      ...(caps.limits.maxBufferSize !== undefined ? { maxBufferSize: caps.limits.maxBufferSize } : {}),
      engine: engine.kind,
      backend: engine.backend,
      ...(state.rate ? { tokensPerSecond: Math.round(state.rate * 10) / 10 } : {}),
      completions: engine.completions,
      ...(engine.embedding ? { embeddingModels: [model] } : {}),
      ...(engine.contextWindow ? { contextWindows: { [model]: engine.contextWindow } } : {}),
    },
    onChange: (s) => {
      show("serve-status", s.message, `status ${s.state}`);
      show("stat-served", String(s.served));
      const rate = s.tokensPerSecond ?? state.rate;
      show("stat-rate", rate == null ? "–" : rate.toFixed(1));
      show("stat-queue", `${s.running ? 1 : 0} running, ${s.waiting} waiting`);
      if (s.state === "refused") $("serve").checked = false;
    },
  });
  state.session.start();
}

$("load").addEventListener("click", () => void load());
$("chat-form").addEventListener("submit", send);
$("serve").addEventListener("change", toggleServe);
main().catch((e) => show("models-note", describeError(e), "error"));
