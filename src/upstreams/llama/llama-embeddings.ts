// Embeddings (`/v1/embeddings`) from llama-server: its JSON answer as it is.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { within } from "../../lib/deadlines.ts";
import type { AttemptContext } from "../upstream.ts";
import { postLlama, targetBody } from "./post-llama.ts";

/**
 * `/v1/embeddings` on llama-server: the body's JSON answer, read within `totalMs`. A server started
 * without `--embeddings` answers 501 `not_supported_error`; that becomes a retryable 400
 * `embeddings_not_supported` (another target may serve them; if none does, the client is told why).
 */
export async function fetchLlamaEmbeddings(target: LlamaTarget, name: string, body: Record<string, unknown> & { model: string }, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await postLlama(target, name, "/embeddings", targetBody(body, body.model, target), ctx, "application/json");
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
  try {
    const text = await within(res.text(), totalMs, ctx.deadlines, () => {
      throw new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: `${name} did not finish the embeddings within timeouts.totalMs (${totalMs} ms).` });
    });
    const json: unknown = JSON.parse(text);
    if (!json || typeof json !== "object" || !Array.isArray((json as { data?: unknown }).data)) throw new Error("no data array");
    return json as Record<string, unknown>;
  } catch (e) {
    if (e instanceof ProxyError) throw e;
    if (ctx.signal.aborted) throw new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
    throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered /v1/embeddings with a body that is not an embeddings list.` });
  }
}
