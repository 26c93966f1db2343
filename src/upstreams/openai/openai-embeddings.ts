// Embeddings (`/v1/embeddings`) from an OpenAI-compatible server: its JSON answer as it is.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { readEmbeddings } from "../wire/read-embeddings.ts";
import type { EmbeddingsBody } from "../adapter.ts";
import { postJson, targetBody } from "../wire/post-json.ts";
import type { AttemptContext } from "../upstream.ts";
import { openAiWire } from "./openai-wire.ts";

/**
 * The server's embeddings list, read within `totalMs`. A server without the endpoint (404, 405, 501)
 * or whose model cannot embed (vLLM: "does not support Embeddings API") becomes a retryable 400
 * `embeddings_not_supported`: another target may serve them; if none does, the client is told why.
 */
export async function fetchOpenAiEmbeddings(target: OpenAiTarget, name: string, body: EmbeddingsBody, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await postJson(openAiWire, target, name, "/embeddings", targetBody(body, body.model, target), ctx, "application/json");
  } catch (e) {
    if (e instanceof ProxyError && cannotEmbed(e)) {
      throw new ProxyError({ status: 400, code: "embeddings_not_supported", retryable: true, param: "model", message: `${name} does not serve embeddings for this model. Use a model whose targets do.` });
    }
    throw e;
  }
  return readEmbeddings(res, name, ctx, totalMs);
}

function cannotEmbed(e: ProxyError): boolean {
  const status = e.upstreamStatus;
  if (/does not serve the model/.test(e.message)) return false; // the model is missing: that error says so better
  return status === 404 || status === 405 || status === 501 || (/embedding/i.test(e.message) && /not support/i.test(e.message));
}
