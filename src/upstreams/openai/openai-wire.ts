// An OpenAI-compatible server's side of OpenAI's HTTP (../wire/post-json.ts): the headers Switchyard
// sends it (its own, the target's key and extra headers), its error mapping, its name in messages.
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { rememberSecrets } from "../../errors/redact-secrets.ts";
import { bearerHeader, postHeaders, type HeaderContext, type WireKind } from "../wire/post-json.ts";
import { mapOpenAiError } from "./map-openai-error.ts";

/**
 * A POST's headers: the target's extra `headers` (their values remembered as secrets, so an upstream
 * that quotes them back is redacted), its key, then Switchyard's own (../wire/request-headers.ts).
 */
export function openAiHeaders(target: OpenAiTarget, name: string, ctx: HeaderContext, accept: string): Record<string, string> {
  if (target.headers) rememberSecrets(target.headers, Object.keys(target.headers));
  return { ...target.headers, ...bearerHeader(target.apiKeySecret, name, ctx.env), ...postHeaders(ctx, accept) };
}

/** POSTs to an OpenAI-compatible server's endpoints (chat, completions, embeddings). */
export const openAiWire: WireKind<OpenAiTarget> = { what: "the server", headers: openAiHeaders, mapError: mapOpenAiError };
