// Every literal marker the rewriter reads in a model's output, for an upstream that writes special
// tokens as text only when told which (llama-server's `preserved_tokens`: its chat endpoint gets
// them from the template; a raw completion does not, and would write `<|channel|>` as nothing).

import { CALL_MARKERS, REASONING_MARKERS, STRAY_TAG_CLOSERS, STRAY_TOKEN_CLOSERS } from "./marker-table.ts";
import { DIALECTS } from "./registry.ts";

// Listed with the tokens the dialects read inside their regions since the list began; no dialect
// file reads it, so it is kept here rather than credited to one.
const UNATTRIBUTED_TOKENS = ["[VALUE]"];

// The special tokens inside a compound marker (`<|channel|>analysis<|message|>` holds two).
const TOKEN_IN = /<\|[^<>|]*\|>|<｜[^<>]*｜>|\[[A-Z_]+\]/g;

/** Each marker, and each special token inside one, once: a server keeps those that are one token. */
export const OUTPUT_MARKERS: readonly string[] = (() => {
  const out = new Set<string>([...DIALECTS.flatMap((d) => d.innerTokens ?? []), ...UNATTRIBUTED_TOKENS]);
  for (const [marker] of [...CALL_MARKERS, ...REASONING_MARKERS, ...STRAY_TOKEN_CLOSERS, ...STRAY_TAG_CLOSERS]) {
    out.add(marker);
    for (const m of marker.matchAll(TOKEN_IN)) out.add(m[0]);
  }
  return [...out];
})();
