// Which targets serve a model name (declared, or zero config's llama-server and sessions), narrowed
// by the caller's browser policy: the first step of every request that names a model.
import type { KeyRecord } from "../auth/key-record.ts";
import type { BrowserPolicy } from "../config/config-schema.ts";
import { modelConfig, routerTargets, zeroConfigTargets, type Config } from "../config/config.ts";
import { checkModelName } from "../config/model-name.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { capabilitiesOf, named } from "../upstreams/registry/adapters.ts";
import type { Target } from "./target.ts";

/**
 * Each declared model's targets, named once per configuration (an isolate's config object lives as
 * long as the isolate): the same target objects every request, so what is computed per target
 * (its capabilities) is computed once. Zero config's per model name, a bounded few.
 */
const declaredPlans = new WeakMap<object, Target[]>();
const zeroConfigPlans = new WeakMap<Config, Map<string, Target[]>>();
const MAX_ZERO_CONFIG_PLANS = 256;

/**
 * The ordered list of targets to try for a model name. Every route that takes a model in its body
 * plans with this (or planTargetsFor), so the name's bound is checked here: 400 over 256 characters.
 */
export function planTargets(config: Config, model: string): Target[] {
  checkModelName(model);
  if (!config.models) {
    // Zero config: the llama-server, then any browser session serving a model of that name (implicit).
    let plans = zeroConfigPlans.get(config);
    if (!plans) zeroConfigPlans.set(config, (plans = new Map()));
    let plan = plans.get(model);
    if (!plan) {
      plan = zeroConfigTargets(config, model).map(({ target, implicit }) => named(target, implicit ? { implicit } : {}));
      if (plans.size >= MAX_ZERO_CONFIG_PLANS) plans.delete(plans.keys().next().value!);
      plans.set(model, plan);
    }
    return [...plan];
  }
  const declared = modelConfig(config, model);
  if (!declared && config.routers) {
    // A name no `models` entry declares goes to the routers (the attempt stage drops those that do not list it).
    let plans = zeroConfigPlans.get(config);
    if (!plans) zeroConfigPlans.set(config, (plans = new Map()));
    let plan = plans.get(model);
    if (!plan) {
      plan = routerTargets(config, model).map((t) => named(t));
      if (plans.size >= MAX_ZERO_CONFIG_PLANS) plans.delete(plans.keys().next().value!);
      plans.set(model, plan);
    }
    return [...plan];
  }
  if (!declared) {
    const known = Object.keys(config.models);
    throw new ProxyError({
      status: 404,
      code: "model_not_found",
      param: "model",
      message: `The model "${model}" does not exist here. Available: ${known.map((k) => `"${k}"`).join(", ") || "none"} (GET /v1/models lists them).`,
    });
  }
  let plan = declaredPlans.get(declared);
  if (!plan) declaredPlans.set(declared, (plan = declared.targets.map((t) => named(t))));
  return [...plan];
}

/**
 * The targets one request may try: the model's plan under the caller's browser policy (`key`: the
 * request's key, from the auth middleware; undefined without one). Every API that can reach a
 * browser session plans with this.
 */
export function planTargetsFor(config: Config, model: string, key: KeyRecord | undefined): Target[] {
  return applyBrowserPolicy(planTargets(config, model), browserPolicy(config, key), model, key);
}

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
