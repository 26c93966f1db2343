// A place a request can be served from, as the router sees it: a configured target with its name.
// What it can do is asked of its adapter (capabilitiesOf, adapterOf in src/upstreams/registry.ts).
import type { TargetConfig } from "../config/config-schema.ts";
import { adapterOf } from "../upstreams/registry/adapters.ts";

export type { NamedTarget as Target } from "../upstreams/adapter.ts";

/** Client-facing name of a target: kind and host only (never a path or query that could hold secrets). */
export function targetName(t: TargetConfig): string {
  return adapterOf(t).name(t);
}
