// A relay body → the parameters wllama's createChatCompletion / createCompletion take, and how many
// threads it may use. Pure.
//
// wllama runs llama-server's own request parsing (it hands the JSON to llama.cpp's server code), so the
// body the hub adapted goes through nearly as it is: `grammar`, `seed`, `stop`, a trailing assistant
// message (continued, and echoed first, as llama-server does). Only what the hub shaped for web-llm is
// shaped back: `response_format: {type: "json_object", schema: "<JSON text>"}` (web-llm's form, used
// for json_schema and for prompt-mode tools) becomes llama.cpp's `{type: "json_schema", json_schema}`.

/** wllama's parameters for the relay request `body`, streaming (without the abort signal). */
export function wllamaParams(body: Record<string, unknown>): Record<string, unknown> {
  // `stream_options.include_usage` stays: llama.cpp then sends the usage chunk (with its timings).
  const { model: _model, n: _n, ...rest } = body;
  const out: Record<string, unknown> = { ...rest, stream: true };
  const format = body.response_format as { type?: unknown; schema?: unknown } | null | undefined;
  if (format && format.type === "json_object" && typeof format.schema === "string") {
    let schema: unknown;
    try {
      schema = JSON.parse(format.schema);
    } catch {
      schema = undefined;
    }
    out.response_format = schema === undefined ? { type: "json_object" } : { type: "json_schema", json_schema: { name: "answer", schema } };
  }
  return out;
}

/** Threads when cross-origin isolated: half the cores, at most 4 (a small model gains nothing more). */
const MAX_THREADS = 4;

/**
 * How many threads this page can run llama.cpp on: 1 unless cross-origin isolated (threads need
 * SharedArrayBuffer), else half the logical cores, 2 to 4.
 */
export function threadsFor({ crossOriginIsolated, hardwareConcurrency }: { crossOriginIsolated?: boolean; hardwareConcurrency?: number }): number {
  if (!crossOriginIsolated) return 1;
  return Math.max(2, Math.min(MAX_THREADS, Math.floor((hardwareConcurrency ?? 2) / 2) || 2));
}
