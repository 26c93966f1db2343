// llama-server's side of OpenAI's HTTP (../wire/post-json.ts): the headers Switchyard sends it (only
// its own, and the target's key), its error mapping, its name in messages.
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { bearerHeader, postHeaders, type HeaderContext, type WireKind } from "../wire/post-json.ts";
import { mapLlamaError } from "./map-llama-error.ts";

/** A POST's headers to a llama-server: its own (../wire/post-json.ts) and the target's key. */
export function llamaHeaders(target: LlamaTarget, name: string, ctx: HeaderContext, accept: string): Record<string, string> {
  return { ...postHeaders(ctx, accept), ...bearerHeader(target.apiKeySecret, name, ctx.env) };
}

/** The target's Authorization header alone, for its GETs and llama-server's own routes. */
export function llamaAuthHeaders(target: LlamaTarget, name: string, env: EnvVars): Record<string, string> {
  return bearerHeader(target.apiKeySecret, name, env);
}

/** POSTs to llama-server's OpenAI endpoints (chat, completions, embeddings). */
export const llamaWire: WireKind<LlamaTarget> = {
  what: "llama-server",
  headers: llamaHeaders,
  mapError: (status, text, contentType, name) => mapLlamaError(status, text, contentType, name),
};
