// What a misconfigured deployment says about itself, and to whom: the HTTP answer (seen by anyone,
// before any key is checked) names each wrong field and the fix, never a configured value (internal
// URLs, hostnames); the Worker's log gets the whole text. Pure.

import type { ConfigEnv, ConfigProblem } from "./config.ts";

const FIX = "Fix the variable (wrangler.toml [vars], .dev.vars or --var) and redeploy; `npm start` checks it before starting.";
const HIDDEN = "<configured value>";

export function configErrorMessages(problems: ConfigProblem[], env: ConfigEnv): { public: string; log: string } {
  const values = configuredValues(env);
  const unparsable = values === null;
  const told = problems.map((p) => {
    if (unparsable && p.field === "SWITCHYARD_CONFIG") return `${p.field} is not valid JSON`;
    return `${p.field} ${hide(p.message, values ?? [])}`;
  });
  return {
    public: `Switchyard is misconfigured: ${sentence(told)} ${FIX} The configured values are not repeated here; the Worker's log has them.`,
    log: `Switchyard is misconfigured: ${sentence(problems.map((p) => `${p.field} ${p.message}`))} ${FIX}`,
  };
}

/** The problems as one sentence, ending in exactly one period. */
function sentence(parts: string[]): string {
  const text = parts.join("; ");
  return text.endsWith(".") ? text : `${text}.`;
}

/** `message` with every configured value in it replaced (the longest first, so none is left in part). */
function hide(message: string, values: string[]): string {
  let out = message;
  for (const v of values) if (out.includes(v)) out = out.split(v).join(HIDDEN);
  return out;
}

/**
 * The values a problem's message may quote: LLAMA_URL, and of SWITCHYARD_CONFIG every string that is
 * a URL or long enough to be a name or host (short ones such as "llama" are also words of the fix
 * texts). Null when SWITCHYARD_CONFIG is not JSON (its parse error quotes it: none of it is repeated).
 */
function configuredValues(env: ConfigEnv): string[] | null {
  const values = new Set<string>();
  if (typeof env.LLAMA_URL === "string" && env.LLAMA_URL !== "") values.add(env.LLAMA_URL);
  let json: unknown = env.SWITCHYARD_CONFIG;
  if (typeof json === "string" && json !== "") {
    try {
      json = JSON.parse(json);
    } catch {
      return null;
    }
  }
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      if (v.includes("://") || v.length >= 8) values.add(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(json);
  return [...values].sort((a, b) => b.length - a.length);
}
