// A reasoning item's `encrypted_content`: sealed when the answer is written, opened when sent back.
import { openField, sealField, type Sealer } from "./sealer.ts";

// A reasoning item's `encrypted_content`: the reasoning text sealed with the deployment's key, so a
// stateless client (store: false) can hand it back on the next turn and the model sees its own
// reasoning again. Tokens from elsewhere (another deployment, OpenAI) do not open.

export const REASONING_PURPOSE = "responses.reasoning";

export function sealReasoning(sealer: Sealer, text: string): string {
  return sealField(sealer, REASONING_PURPOSE, "text", text);
}

/** The reasoning text, or null for a token this deployment did not seal. */
export function openReasoning(sealer: Sealer | undefined, token: string): string | null {
  return openField(sealer, REASONING_PURPOSE, "text", token);
}
