/**
 * llama-server's `/v1/completions` SSE → the chat chunk shape, line by line, so the chat parser
 * (`parseLlamaSse`: `[DONE]`, `error:` lines, in-stream errors, unfinished streams) reads it
 * unchanged: `choices[].text` becomes `choices[].delta.content`; usage, timings and errors pass
 * as they are. Lines split across chunks wait for their end.
 */
export function completionSseAsChat(): TransformStream<string, string> {
  let tail = "";
  return new TransformStream<string, string>({
    transform(text, controller) {
      const buffered = tail + text;
      const cut = buffered.lastIndexOf("\n");
      if (cut === -1) {
        tail = buffered;
        return;
      }
      tail = buffered.slice(cut + 1);
      controller.enqueue(buffered.slice(0, cut + 1).split("\n").map(rewriteLine).join("\n"));
    },
    flush(controller) {
      if (tail) controller.enqueue(rewriteLine(tail));
    },
  });
}

export function rewriteLine(line: string): string {
  const m = /^data: ?(\{.*\})\r?$/.exec(line);
  if (!m) return line;
  let chunk: { choices?: unknown };
  try {
    chunk = JSON.parse(m[1]!);
  } catch {
    return line; // the chat parser reports it
  }
  if (!Array.isArray(chunk.choices)) return line;
  const choices = chunk.choices.map((c: { index?: number; text?: unknown; finish_reason?: unknown }) => ({
    index: c.index ?? 0,
    delta: typeof c.text === "string" ? { content: c.text } : {},
    finish_reason: c.finish_reason ?? null,
  }));
  return `data: ${JSON.stringify({ ...chunk, choices })}`;
}
