/** `<origin>/<path>` for llama-server's own (non-OpenAI) routes, from a base URL with or without `/v1`. */
export function llamaRootUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "").replace(/\/v1$/, "")}${path}`;
}
