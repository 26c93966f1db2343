// One streamed chat turn of bench/agent-pool.mjs, sent to Switchyard or straight to a llama-server,
// read to its end: time to the first token, time to the end, the prompt's cached and total tokens,
// and which server answered. A refusal or a timeout is an outcome, not an exception.
import { performance } from "node:perf_hooks";
import { literalGrammar } from "../../test/support/llama-server.mjs";
import { readChatStream } from "../chat-stream.mjs";

/**
 * @typedef {{ ok: boolean, status: number, error?: string, ttftMs: number | null, ms: number,
 *   promptTokens: number, cachedTokens: number, completionTokens: number, target: string | null }} TurnResult
 *   `target`: Switchyard's x_switchyard.target (null when sent straight to a server)
 */

/**
 * @param {{ url: string, model: string, messages: unknown[], answer: string, maxTokens: number, timeoutMs: number }} o
 * @returns {Promise<TurnResult>}
 */
export async function streamTurn({ url, model, messages, answer, maxTokens, timeoutMs }) {
  const t0 = performance.now();
  /** @type {TurnResult} */
  const out = { ok: false, status: 0, ttftMs: null, ms: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, target: null };
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true }, grammar: literalGrammar(answer), max_tokens: maxTokens }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    out.status = res.status;
    if (res.status !== 200 || !res.body) {
      out.error = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`;
      return out;
    }
    const stream = await readChatStream(res.body, () => {
      if (out.ttftMs === null) out.ttftMs = performance.now() - t0;
    });
    if (typeof stream.ext?.target === "string") out.target = stream.ext.target;
    if (stream.usage) {
      out.promptTokens = stream.usage.prompt_tokens ?? 0;
      out.completionTokens = stream.usage.completion_tokens ?? 0;
      // llama-server's own usage carries cached_tokens (its timings.cache_n); Switchyard passes it on.
      out.cachedTokens = stream.usage.prompt_tokens_details?.cached_tokens ?? stream.timings?.cache_n ?? 0;
    }
    const problems = stream.problems;
    if (!stream.done) problems.push("no [DONE]");
    if (stream.content !== answer) problems.push(`answer ${JSON.stringify(stream.content.slice(0, 80))}`);
    if (problems.length) out.error = problems.join("; ");
    else out.ok = true;
  } catch (e) {
    out.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  }
  out.ms = performance.now() - t0;
  return out;
}
