import { rewriteToolCalls, ToolCallStreamRewriter, type RewriteOptions, type ToolDefinition, type UpstreamEventLike } from "./imports.ts";

export { rewriteToolCalls };

/** Calls as [name, parsed arguments], for comparisons that ignore ids and formatting. */
export function callsOf(result: { tool_calls: Array<{ function: { name: string; arguments: string } }> }) {
  return result.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)] as [string, unknown]);
}

/** Runs the stream rewriter over `chunks` and assembles what the encoder would send. */
export function streamChunks(tools: readonly ToolDefinition[], chunks: string[], options: RewriteOptions = {}) {
  const rw = new ToolCallStreamRewriter(tools, options);
  const events: UpstreamEventLike[] = [];
  for (const c of chunks) events.push(...rw.push(c));
  events.push(...rw.flush());
  let content = "";
  let reasoning = "";
  const args = new Map<number, string>();
  const names = new Map<number, string>();
  for (const e of events) {
    if (e.type === "text") content += e.delta;
    else if (e.type === "reasoning") reasoning += e.delta;
    else if (e.type === "toolCall") {
      if (e.name !== undefined) names.set(e.index, e.name);
      args.set(e.index, (args.get(e.index) ?? "") + e.argumentsDelta);
    }
  }
  return {
    events,
    content: content === "" ? null : content,
    reasoning,
    calls: [...names.keys()].sort((a, b) => a - b).map((i) => [names.get(i)!, args.get(i)!] as [string, string]),
    scored: rw.toolCalls,
  };
}

/** Splits `text` at random places (a seeded generator, so a failure can be replayed). */
export function randomSplits(text: string, seed: number, maxChunk = 9): string[] {
  let s = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = 1 + (s % maxChunk);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}
