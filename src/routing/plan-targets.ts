// Which targets serve a model name (declared, or zero config's llama-server and sessions), narrowed
// by the caller's browser policy: the first step of every request that names a model.
import type { KeyRecord } from "../auth/key-record.ts";
import { modelConfig, zeroConfigTargets, type Config } from "../config/config.ts";
import { checkModelName } from "../config/model-name.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { applyBrowserPolicy, browserPolicy } from "./browser-policy.ts";
import { named } from "../upstreams/registry/adapters.ts";
import type { Target } from "./target.ts";

/**
 * The ordered list of targets to try for a model name. Every route that takes a model in its body
 * plans with this (or planTargetsFor), so the name's bound is checked here: 400 over 256 characters.
 */
export function planTargets(config: Config, model: string): Target[] {
  checkModelName(model);
  if (!config.models) {
    // Zero config: the llama-server, then any browser session serving a model of that name (implicit).
    return zeroConfigTargets(config, model).map(({ target, implicit }) => named(target, implicit ? { implicit } : {}));
  }
  const declared = modelConfig(config, model);
  if (!declared) {
    const known = Object.keys(config.models);
    throw new ProxyError({
      status: 404,
      code: "model_not_found",
      param: "model",
      message: `The model "${model}" does not exist here. Available: ${known.map((k) => `"${k}"`).join(", ") || "none"} (GET /v1/models lists them).`,
    });
  }
  return declared.targets.map((t) => named(t));
}

/**
 * The targets one request may try: the model's plan under the caller's browser policy (`key`: the
 * request's key, from the auth middleware; undefined without one). Every API that can reach a
 * browser session plans with this.
 */
export function planTargetsFor(config: Config, model: string, key: KeyRecord | undefined): Target[] {
  return applyBrowserPolicy(planTargets(config, model), browserPolicy(config, key), model, key);
}
