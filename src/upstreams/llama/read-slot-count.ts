// How many slots a llama target has, read from its own `/props` (`total_slots`, its `--parallel`):
// llama-server answers it whatever its flags (`--no-slots` included), so the admission queue can gate
// on it before the health hub's first `/slots` sample reaches the isolate. The same read (and
// per-isolate cache) as the model list's.
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { llamaAuthHeaders } from "./llama-wire.ts";
import { readLlamaProps } from "./read-llama-props.ts";

/** The target's slot count, or undefined when `/props` cannot be read within `timeoutMs`, tells none, or its key secret is missing. Never throws. */
export async function readSlotCount(target: LlamaTarget, env: EnvVars, timeoutMs: number): Promise<number | undefined> {
  let headers: Record<string, string>;
  try {
    headers = llamaAuthHeaders(target, target.url, env);
  } catch {
    return undefined; // its key secret is missing: the request itself will say so
  }
  return (await readLlamaProps(target.url, headers, timeoutMs, target.model))?.slots;
}
