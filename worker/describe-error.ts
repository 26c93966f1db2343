// web-llm errors as one sentence for a person. From its Web Worker they arrive as strings
// ("ModelNotFoundError: Cannot find model record…"), from the main thread as Error objects.

export function errorParts(err: unknown): { kind: string; message: string } {
  if (err && typeof err === "object" && "name" in err && typeof err.name === "string" && "message" in err && typeof err.message === "string" && err.name !== "Error") {
    return { kind: err.name, message: err.message };
  }
  const text = typeof err === "string" ? err : err instanceof Error ? err.message : String(err);
  const [, kind = "Error", message = text] = /^(\w+): ([\s\S]*)$/.exec(text) ?? [];
  return { kind, message: message.replace(/\n    at [\s\S]*$/, "").trim() };
}

/**
 * What the page knows that a hint may name: web-llm's model library version (its `modelVersion`,
 * e.g. "v0_2_86/base": a model library runs only with the web-llm it was built for).
 */
export interface ErrorContext {
  webLlmVersion?: string | undefined;
}

const HINTS: Record<string, string | ((context: ErrorContext) => string)> = {
  ModelNotFoundError: "web-llm does not know this model id; pick one from the list.",
  WebGPUNotAvailableError: "this browser has no WebGPU.",
  ShaderF16SupportError: "this model needs 16-bit shaders, which this GPU lacks; choose a q4f32 model.",
  FeatureSupportError: "this GPU lacks a feature the model needs.",
  DeviceLostError: "the GPU ran out of memory or was reset; try a smaller model.",
  NetworkError: "the download was interrupted; check the connection and try again.",
  TypeError: "a model file could not be downloaded.",
  CompileError: "the model library is not WebAssembly (a wrong URL, or a broken download): check the model's library (mlc.lib in the deployment's configuration).",
  LinkError: ({ webLlmVersion }) =>
    `the model library is not a web-llm model library for this web-llm version${webLlmVersion ? ` (${webLlmVersion})` : ""}: the model's library (mlc.lib in the deployment's configuration) must be built for it.`,
  ContextWindowSizeExceededError: "the conversation is too long for this model; start a new one.",
};

/** `err` as one sentence for a person: what to do, then web-llm's own words (their first line). */
export function describeError(err: unknown, context: ErrorContext = {}): string {
  const { kind, message } = errorParts(err);
  const entry = HINTS[kind];
  const hint = typeof entry === "function" ? entry(context) : entry;
  const first = message.split("\n")[0];
  return hint ? `That did not work: ${hint} (${kind}: ${first})` : `That did not work (${kind}): ${first}`;
}
