// The adapter of each upstream kind, in one table: the one place a target's `kind` is read. Routing
// and the routes ask a target's adapter (adapterOf) and its capabilities (capabilitiesOf).

import type { TargetConfig } from "../../config/config-schema.ts";
import type { Capabilities, NamedTarget, TargetAdapter } from "../adapter.ts";
import { browserAdapter } from "../browser/browser-adapter.ts";
import { llamaAdapter } from "../llama/llama-adapter.ts";
import { openaiAdapter } from "../openai/openai-adapter.ts";

type Kind = TargetConfig["kind"];
type Adapters = { [K in Kind]: TargetAdapter<Extract<TargetConfig, { kind: K }>> };

/** Every kind's adapter. A new kind of upstream is one folder under src/upstreams/ and one line here. */
const ADAPTERS: Adapters = {
  llama: llamaAdapter,
  browser: browserAdapter,
  openai: openaiAdapter,
};

/** The adapter of `target`'s kind. */
export function adapterOf<T extends TargetConfig>(target: T): TargetAdapter<T> {
  return ADAPTERS[target.kind as Kind] as unknown as TargetAdapter<T>;
}

const capabilities = new WeakMap<object, Capabilities>();

/** What `target` can do (computed once per target object). */
export function capabilitiesOf(target: NamedTarget): Capabilities {
  let caps = capabilities.get(target);
  if (!caps) capabilities.set(target, (caps = adapterOf(target).capabilities(target)));
  return caps;
}

/** `target` with its client-facing name (kind and host, never a path or query). */
export function named<T extends TargetConfig>(target: T, extra: { implicit?: boolean } = {}): NamedTarget<T> {
  return { ...target, name: adapterOf(target).name(target), ...extra };
}
