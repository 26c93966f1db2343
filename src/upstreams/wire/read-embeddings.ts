// An embeddings answer's body read whole within the request's total timeout, checked to be an
// embeddings list: the part of /v1/embeddings every kind that speaks OpenAI's HTTP shares.
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import { within } from "../../lib/deadlines.ts";
import type { AttemptContext } from "../upstream.ts";

/** `res`'s JSON embeddings list, read within `totalMs`; a body that is none is a retryable 502 of `name`. */
export async function readEmbeddings(res: Response, name: string, ctx: AttemptContext, totalMs: number): Promise<Record<string, unknown>> {
  try {
    const text = await within(res.text(), totalMs, ctx.deadlines, () => {
      throw new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: `${name} did not finish the embeddings within timeouts.totalMs (${totalMs} ms).` });
    });
    const json: unknown = JSON.parse(text);
    if (!json || typeof json !== "object" || !Array.isArray((json as { data?: unknown }).data)) throw new Error("no data array");
    return json as Record<string, unknown>;
  } catch (e) {
    if (e instanceof ProxyError) throw e;
    if (ctx.signal.aborted) throw clientClosed();
    throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered /v1/embeddings with a body that is not an embeddings list.` });
  }
}
