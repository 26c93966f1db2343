// Reading the Worker's environment by name: the secrets targets name, and Durable Object bindings.
import { ProxyError } from "../errors/proxy-error.ts";

/**
 * The Worker's environment as it is read: by name. A target names its key's secret (`apiKeySecret`),
 * and the Durable Object bindings are looked up where they are used. The Worker's `Env` is one as it
 * is (src/env.d.ts gives it the index signature of the secrets wrangler cannot see), so `c.env` is
 * passed as it comes; unit tests pass a plain record.
 */
export type EnvVars = Readonly<Record<string, unknown>>;

/** The secret (or variable) called `name`, when it is set to a non-empty string. */
export function secretOf(env: EnvVars, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A Durable Object namespace from wrangler.toml; a 500 config_error naming the binding when it is missing. */
export function durableNamespace<T extends Rpc.DurableObjectBranded | undefined>(env: EnvVars, name: string): DurableObjectNamespace<T> {
  const ns = env[name];
  if (!ns) throw new ProxyError({ status: 500, type: "server_error", code: "config_error", message: `The ${name} Durable Object binding is missing from wrangler.toml.` });
  return ns as DurableObjectNamespace<T>;
}
