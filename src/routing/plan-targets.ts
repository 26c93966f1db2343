import { modelConfig, type Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { targetName, type Target } from "./target.ts";

/** The ordered list of targets to try for a model name. */
export function planTargets(config: Config, model: string): Target[] {
  if (!config.models) {
    // Zero config: the llama-server, then any browser session serving a model of that name.
    return [
      { kind: "llama", url: config.llamaUrl, name: targetName({ kind: "llama", url: config.llamaUrl }) },
      { kind: "browser", model, name: targetName({ kind: "browser", model }), implicit: true },
    ];
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
  return declared.targets.map((t) => ({ ...t, name: targetName(t) }) as Target);
}
