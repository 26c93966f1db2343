// Reads a streamed chat completion's SSE body to its end, for the benches that drive one: the text,
// [DONE], the finish reason, the last usage, timings and x_switchyard seen, and what was wrong with
// the stream (a frame that is not JSON, an error frame, a broken event stream) as problems, not throws.
import { createParser } from "eventsource-parser";

/**
 * @typedef {{ content: string, done: boolean, finish: string | null, ext: any, usage: any, timings: any, problems: string[] }} ChatStream
 *   `ext`: Switchyard's x_switchyard (on the finish frame); `usage`, `timings`: as the last frame carrying them sent them
 */

/**
 * @param {AsyncIterable<Uint8Array>} body
 * @param {(content: string) => void} [onDelta] called after each non-empty text delta, with the text so far
 * @returns {Promise<ChatStream>}
 */
export async function readChatStream(body, onDelta) {
  /** @type {ChatStream} */
  const out = { content: "", done: false, finish: null, ext: undefined, usage: undefined, timings: undefined, problems: [] };
  const parser = createParser({
    onEvent(ev) {
      if (ev.data === "[DONE]") {
        out.done = true;
        return;
      }
      /** @type {any} */
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        out.problems.push(`not JSON: ${ev.data.slice(0, 200)}`);
        return;
      }
      if (frame.error) out.problems.push(`error frame: ${JSON.stringify(frame.error).slice(0, 500)}`);
      const choice = frame.choices?.[0];
      if (typeof choice?.delta?.content === "string" && choice.delta.content.length) {
        out.content += choice.delta.content;
        onDelta?.(out.content);
      }
      if (choice?.finish_reason) out.finish = choice.finish_reason;
      if (frame.x_switchyard) out.ext = frame.x_switchyard;
      if (frame.usage) out.usage = frame.usage;
      if (frame.timings) out.timings = frame.timings;
    },
    onError(e) {
      out.problems.push(`SSE: ${e.message}`);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return out;
}
