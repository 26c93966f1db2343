// Embeddings (`/v1/embeddings`) from llama-server: its JSON answer as it is.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { postJson, targetBody } from "../wire/post-json.ts";
import { readEmbeddings } from "../wire/read-embeddings.ts";
import type { AttemptContext } from "../upstream.ts";
import { llamaWire } from "./llama-wire.ts";

/**
 * `/v1/embeddings` on llama-server: the body's JSON answer, read within `totalMs`. A server started
 * without `--embeddings` answers 501 `not_supported_error`; that becomes a retryable 400
 * `embeddings_not_supported` (another target may serve them; if none does, the client is told why).
 */
export async function fetchLlamaEmbeddings(target: LlamaTarget, name: string, body: Record<string, unknown> & { model: string }, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await postJson(llamaWire, target, name, "/embeddings", targetBody(body, body.model, target), ctx, "application/json");
  } catch (e) {
    if (e instanceof ProxyError && e.status === 502 && /HTTP 501|not support/i.test(e.message)) {
      throw new ProxyError({
        status: 400,
        code: "embeddings_not_supported",
        retryable: true,
        param: "model",
        message: `${name} does not serve embeddings (llama-server needs --embeddings and a pooling type, e.g. --pooling mean). Use a model whose targets do.`,
      });
    }
    throw e;
  }
  return readEmbeddings(res, name, ctx, totalMs);
}
