// The one rule for a model name a client sends: at most MODEL_NAME_MAX characters, everywhere a name is read.
import { ProxyError } from "../errors/proxy-error.ts";

/**
 * The longest model name accepted (and declared: the configuration holds its names to the same
 * bound, so every declared model can be asked for). A name becomes part of a usage row's key, a
 * browser target's name and log lines; without a bound a client could make any of them megabytes.
 */
export const MODEL_NAME_MAX = 256;

/** 400 invalid_value (param `model`) for a name longer than MODEL_NAME_MAX; the name itself is not echoed. */
export function checkModelName(model: string): void {
  if (model.length <= MODEL_NAME_MAX) return;
  throw new ProxyError({
    status: 400,
    code: "invalid_value",
    param: "model",
    message: `model must be at most ${MODEL_NAME_MAX} characters (this one has ${model.length}). GET /v1/models lists the names this deployment serves.`,
  });
}
