// What the GPU can do, checked before anything is downloaded, in plain sentences.

/** web-llm's own minimums (it checks them only after downloading the model library). */
export const REQUIRED_LIMITS = {
  maxBufferSize: 256 * 1024 * 1024,
  maxStorageBufferBindingSize: 128 * 1024 * 1024,
  maxComputeWorkgroupStorageSize: 32 * 1024,
  maxStorageBuffersPerShaderStage: 10,
};

/**
 * The part of WebGPU this check reads (TypeScript's DOM library does not declare WebGPU).
 * @typedef {{ vendor?: string, architecture?: string, isFallbackAdapter?: boolean }} GpuAdapterInfo
 * @typedef {{ info?: GpuAdapterInfo, features: ReadonlySet<string>, limits: Record<string, number | undefined> }} GpuAdapter
 * @typedef {{ requestAdapter(options?: { powerPreference?: "low-power" | "high-performance" }): Promise<GpuAdapter | null> }} Gpu
 */

/**
 * What the page learns about the GPU: whether models can run, what to tell the person, and what the
 * session reports to the hub (shader-f16, the adapter's name, the limits web-llm checks).
 * @typedef {object} WebGPUCheck
 * @property {boolean} ok
 * @property {boolean} shaderF16
 * @property {{ vendor: string, architecture: string, isFallbackAdapter: boolean } | null} adapter
 * @property {Partial<Record<keyof typeof REQUIRED_LIMITS, number>>} limits
 * @property {string[]} sentences
 */

/**
 * @param {Navigator & { gpu?: Gpu }} [nav] the browser's navigator (`gpu` is WebGPU's entry point)
 * @returns {Promise<WebGPUCheck>}
 */
export async function checkWebGPU(nav = navigator) {
  /** @type {WebGPUCheck} */
  const result = { ok: false, shaderF16: false, adapter: null, limits: {}, sentences: [] };
  if (!nav.gpu) {
    result.sentences.push("This browser does not offer WebGPU, so it cannot run a model. Use a recent Chrome, Edge or Safari, on a page served over https or from localhost.");
    return result;
  }
  let adapter = null;
  try {
    adapter = await nav.gpu.requestAdapter({ powerPreference: "high-performance" });
  } catch {}
  if (!adapter) {
    result.sentences.push("WebGPU is present, but the browser offered no GPU adapter: the GPU may be blocked or its driver unsupported. Try another browser or update the graphics driver.");
    return result;
  }
  const info = adapter.info ?? {};
  result.adapter = { vendor: info.vendor ?? "", architecture: info.architecture ?? "", isFallbackAdapter: Boolean(info.isFallbackAdapter) };
  result.shaderF16 = adapter.features.has("shader-f16");
  const short = [];
  for (const name of /** @type {Array<keyof typeof REQUIRED_LIMITS>} */ (Object.keys(REQUIRED_LIMITS))) {
    const need = REQUIRED_LIMITS[name];
    const have = adapter.limits[name];
    result.limits[name] = have;
    if (have === undefined || !(have >= need)) short.push(`${name} is ${have}, models need ${need}`);
  }
  const who = [result.adapter.vendor, result.adapter.architecture].filter(Boolean).join(" ") || "an unnamed GPU";
  if (short.length) {
    result.sentences.push(`WebGPU works with ${who}, but its limits are too small for any model (${short.join("; ")}).`);
    return result;
  }
  result.ok = true;
  result.sentences.push(`WebGPU works here, with ${who}.`);
  result.sentences.push(
    result.shaderF16
      ? "It supports 16-bit shaders (shader-f16), so the smaller q4f16 models can run."
      : "It does not support 16-bit shaders (shader-f16), so only q4f32 models are listed; they need a little more memory.",
  );
  if (result.adapter.isFallbackAdapter) result.sentences.push("This is a software fallback adapter (no real GPU): models will run very slowly, if at all.");
  return result;
}
