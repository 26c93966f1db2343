// Reads a finished region with its dialect's parser (the one its marker named, dialects/), and adds
// what only the region knows: a closing marker that never came.

import type { RegionSpec } from "../dialects/candidate.ts";
import { problem } from "../scoring/problems.ts";
import type { RegionParse } from "../scoring/raw-call.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

export function parseRegion(spec: RegionSpec, body: string, closed: boolean, tools: ToolSet): RegionParse | null {
  const parsed = spec.parse(body, closed, spec, tools);
  if (parsed && spec.close.length > 0 && !closed && !spec.optionalClose) {
    for (const c of parsed.calls) {
      if (!c.problems.some((p) => p.code === "truncated" || p.code === "missing_closing_tag")) {
        c.problems.push(problem("missing_closing_tag", `the closing ${spec.close[0]} is missing`));
      }
    }
  }
  return parsed;
}
