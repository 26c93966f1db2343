// web-llm errors as one sentence for a person. From its Web Worker they arrive as strings
// ("ModelNotFoundError: Cannot find model record…"), from the main thread as Error objects.

/**
 * @param {unknown} err
 * @returns {{ kind: string, message: string }}
 */
export function errorParts(err) {
  if (err && typeof err === "object" && "name" in err && typeof err.name === "string" && "message" in err && typeof err.message === "string" && err.name !== "Error") {
    return { kind: err.name, message: err.message };
  }
  const text = typeof err === "string" ? err : err instanceof Error ? err.message : String(err);
  const [, kind = "Error", message = text] = /^(\w+): ([\s\S]*)$/.exec(text) ?? [];
  return { kind, message: message.replace(/\n    at [\s\S]*$/, "").trim() };
}

/** @type {Record<string, string>} */
const HINTS = {
  ModelNotFoundError: "web-llm does not know this model id; pick one from the list.",
  WebGPUNotAvailableError: "this browser has no WebGPU.",
  ShaderF16SupportError: "this model needs 16-bit shaders, which this GPU lacks; choose a q4f32 model.",
  FeatureSupportError: "this GPU lacks a feature the model needs.",
  DeviceLostError: "the GPU ran out of memory or was reset; try a smaller model.",
  NetworkError: "the download was interrupted; check the connection and try again.",
  TypeError: "a model file could not be downloaded.",
  CompileError: "the model library is broken or for another web-llm version.",
  LinkError: "the model library was built for another web-llm version.",
  ContextWindowSizeExceededError: "the conversation is too long for this model; start a new one.",
};

/** @param {unknown} err */
export function describeError(err) {
  const { kind, message } = errorParts(err);
  const hint = HINTS[kind];
  const first = message.split("\n")[0];
  return hint ? `That did not work: ${hint} (${kind}: ${first})` : `That did not work (${kind}): ${first}`;
}
