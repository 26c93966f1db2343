// The ids of the calls the rewriter makes: the upstream's own ids (Mistral's, Kimi's) are not reused.

import { randomId } from "../../lib/ids.ts";

/** `call_` + 24 random alphanumerics, uniformly drawn. */
export function newCallId(): string {
  return randomId("call_", 24);
}
