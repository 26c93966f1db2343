// A whole `chat.completion` as the one chunk its stream would have carried, so a kind's chunk mapping
// replays a server's unstreamed answer as events.
import type { ChatChunk, ChatCompletion } from "./chat-chunk.ts";

/**
 * Pure: each choice's message becomes its delta (each tool call whole, indexed by its position, its
 * arguments a string) and finishes ("stop" where the body gave no reason); a body without a first
 * choice gets an empty one that finishes, as a stream would. The usage, timings and an error go as
 * they are.
 */
export function completionAsChunk(body: ChatCompletion): ChatChunk {
  const choices: NonNullable<ChatChunk["choices"]> = (body.choices ?? []).map((c) => ({
    ...c,
    finish_reason: c.finish_reason || "stop",
    delta: c.message
      ? {
          ...c.message,
          tool_calls: (c.message.tool_calls ?? []).map((tc, index) => ({
            index,
            ...(tc.id ? { id: tc.id } : {}),
            function: { name: tc.function?.name ?? "", arguments: typeof tc.function?.arguments === "string" ? tc.function.arguments : JSON.stringify(tc.function?.arguments ?? {}) },
          })),
        }
      : null,
  }));
  if (!choices.some((c) => (c.index ?? 0) === 0)) choices.push({ index: 0, finish_reason: "stop", delta: null });
  return { ...body, choices };
}
