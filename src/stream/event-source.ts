import type { UpstreamEvent } from "./events.ts";

/** A pull source of internal events (an upstream attempt, possibly wrapped by a rewriter). */
export interface EventPull {
  next(): Promise<UpstreamEvent | null>;
  cancel(): void;
}
