// What a call region comes to before it is held or read: its end, its body's calls judged (a
// verdict), as text mode hands them to region mode (scan/region-mode.ts). Types only, shared by the
// scanner's state and its region mode.

import type { RegionParse } from "../scoring/raw-call.ts";
import type { ScoredToolCall } from "../scoring/types.ts";
import type { RegionEnd } from "./region-end.ts";

/** What a parsed region comes to: nothing (rejected), or what to emit. */
export type Verdict =
  | { kind: "reject" }
  /** Past the call cap: dropped unscored. */
  | { kind: "overCap"; count: number }
  /** The calls of the block just closed, written again. */
  | { kind: "echo" }
  | { kind: "emit"; content: string | undefined; calls: ScoredToolCall[]; unknown: number };

/** What text mode learned of a region before holding it (decideAtOnce), handed to stepRegion. */
export interface KnownRegion {
  end: RegionEnd;
  /** Its body read and judged, when that was done. */
  read?: { parsed: RegionParse | null; verdict: Verdict };
}
