// The `compaction` item's sealed summary: made for /v1/responses/compact, opened when sent back.
import { openField, sealField, type Sealer } from "./sealer.ts";
import { randomId } from "../../lib/ids.ts";

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
  return { type: "compaction", id: randomId("cmp_"), encrypted_content: sealField(sealer, COMPACTION_PURPOSE, "summary", summary) };
}

/** The summary, or null for a token this deployment did not seal. */
export function openCompaction(sealer: Sealer | undefined, token: string): string | null {
  return openField(sealer, COMPACTION_PURPOSE, "summary", token);
}
