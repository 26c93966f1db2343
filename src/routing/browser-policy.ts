// Whether browser sessions may serve a caller, and its plan without them when not, so a denied
// caller's prompt never reaches a teammate's tab.
import type { KeyRecord } from "../auth/key-record.ts";
import type { BrowserPolicy } from "../config/config-schema.ts";
import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { capabilitiesOf } from "../upstreams/registry/adapters.ts";
import type { Target } from "./target.ts";

/** Pure: whether a request may be served by a browser session: its key's own policy, else the deployment's `browser.default` (also for a request without a key). */
export function browserPolicy(config: Config, key: Pick<KeyRecord, "browser"> | undefined): BrowserPolicy {
  return key?.browser ?? config.browser.default;
}

/**
 * Pure: the targets a request may use. Denied, every browser target is left out of the plan before
 * anything is tried, so its prompt is never relayed to a session nor queued in the hub. When nothing
 * is left — the model is served only by browser sessions — `403 browser_not_allowed`: a refusal of
 * this caller that no retry would change (not a 503, which clients retry).
 */
export function applyBrowserPolicy(targets: Target[], policy: BrowserPolicy, model: string, key: Pick<KeyRecord, "id" | "name" | "browser"> | undefined): Target[] {
  if (policy === "allow") return targets;
  const kept = targets.filter((t) => !capabilitiesOf(t).teammateDevice);
  if (kept.length > 0) return kept;
  const who = key
    ? key.browser === "deny"
      ? `The key "${key.name}" may not be served by browser sessions (its browser policy is "deny")`
      : `The key "${key.name}" may not be served by browser sessions (it follows this deployment's browser.default, "deny")`
    : `Requests without a key may not be served by browser sessions here (browser.default is "deny")`;
  const fix = key
    ? `Ask your admin to allow it (npm run keys -- update ${key.id} --browser allow) or to give the model a llama target.`
    : `Set "browser": {"default": "allow"} in SWITCHYARD_CONFIG, send a key allowed to use browser sessions, or give the model a llama target.`;
  throw new ProxyError({
    status: 403,
    code: "browser_not_allowed",
    param: "model",
    message: `${who}, and the model "${model}" is served only by browser sessions. ${fix}`,
  });
}
