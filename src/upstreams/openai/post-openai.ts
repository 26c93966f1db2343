// POSTs a JSON body to one of an OpenAI-compatible server's endpoints, with its deadlines and its errors as ProxyErrors.
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { postJson, v1Url } from "../wire/post-json.ts";
import type { AttemptContext } from "../upstream.ts";
import { openAiHeaders } from "./openai-headers.ts";
import { mapOpenAiError } from "./map-openai-error.ts";

/** `<base>/v1<path>` for a base URL given with or without its trailing `/v1`. */
export const openAiUrl = v1Url;

/** POSTs `body` to `<url>/v1<path>`: only openAiHeaders go upstream, under postJson's deadlines, errors mapped by mapOpenAiError. */
export function postOpenAi(
  target: OpenAiTarget,
  name: string,
  path: string,
  body: unknown,
  ctx: AttemptContext,
  accept: string,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  return postJson(
    { name, url: openAiUrl(target.url, path), headers: openAiHeaders(target, name, ctx, accept), body, what: "the server", mapError: (status, text, type) => mapOpenAiError(status, text, type, name, path) },
    ctx,
  );
}
