import type { Sealer } from "../../crypto/sealer.ts";
import { randomId } from "../../stream/random-id.ts";

// A `compaction` item: a summary of the conversation so far, sealed with the deployment's key, which
// the client sends in place of the turns it replaces. One from elsewhere (OpenAI's) cannot be read.

export const COMPACTION_PURPOSE = "responses.compaction";

export interface CompactionItem {
  type: "compaction";
  id: string;
  encrypted_content: string;
}

/** The item `/v1/responses/compact` answers with; its summary reaches the model as a user message. */
export function compactionItem(sealer: Sealer, summary: string): CompactionItem {
  return { type: "compaction", id: randomId("cmp_"), encrypted_content: sealer.seal(COMPACTION_PURPOSE, JSON.stringify({ summary })) };
}

/** The summary, or null for a token this deployment did not seal. */
export function openCompaction(sealer: Sealer | undefined, token: string): string | null {
  const opened = sealer?.open(COMPACTION_PURPOSE, token);
  if (opened == null) return null;
  try {
    const value: unknown = JSON.parse(opened);
    const summary = value && typeof value === "object" ? (value as Record<string, unknown>).summary : undefined;
    return typeof summary === "string" ? summary : null;
  } catch {
    return null;
  }
}
