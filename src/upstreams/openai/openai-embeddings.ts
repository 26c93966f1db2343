// Embeddings (`/v1/embeddings`) from an OpenAI-compatible server: its JSON answer as it is.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { getUpstreamStatus } from "../upstream-hints.ts";
import { within } from "../../lib/deadlines.ts";
import type { EmbeddingsBody } from "../adapter.ts";
import { targetBody } from "../wire/post-json.ts";
import type { AttemptContext } from "../upstream.ts";
import { postOpenAi } from "./post-openai.ts";

/**
 * The server's embeddings list, read within `totalMs`. A server without the endpoint (404, 405, 501)
 * or whose model cannot embed (vLLM: "does not support Embeddings API") becomes a retryable 400
 * `embeddings_not_supported`: another target may serve them; if none does, the client is told why.
 */
export async function fetchOpenAiEmbeddings(target: OpenAiTarget, name: string, body: EmbeddingsBody, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await postOpenAi(target, name, "/embeddings", targetBody(body, body.model, target), ctx, "application/json");
  } catch (e) {
    if (e instanceof ProxyError && cannotEmbed(e)) {
      throw new ProxyError({ status: 400, code: "embeddings_not_supported", retryable: true, param: "model", message: `${name} does not serve embeddings for this model. Use a model whose targets do.` });
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

function cannotEmbed(e: ProxyError): boolean {
  const status = getUpstreamStatus(e);
  if (/does not serve the model/.test(e.message)) return false; // the model is missing: that error says so better
  return status === 404 || status === 405 || status === 501 || (/embedding/i.test(e.message) && /not support/i.test(e.message));
}
