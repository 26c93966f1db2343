// The configuration, loaded once per isolate on first use, and a bad one turned into the
// 500 config_error every route answers.
import { ProxyError } from "../errors/proxy-error.ts";
import { rememberSecrets, rememberSecretValues, secretNames } from "../errors/redact-secrets.ts";
import { parseConfig, type Config, type ConfigEnv } from "./config.ts";
import { configErrorMessages } from "./config-error-message.ts";

// A Worker has no startup hook, so the configuration is validated on first use and the result kept
// for the life of the isolate, keyed by the raw inputs (tests and `--var` may change them). Every
// route and the request log's middleware load it per request: the check is three comparisons.
let cached: { raw: unknown; llamaUrl: unknown; mode: unknown; config: Config | ProxyError; secrets: string[]; values: string[]; rememberedIn?: object } | undefined;

export function loadConfig(env: ConfigEnv): Config {
  if (!cached || cached.raw !== env.SWITCHYARD_CONFIG || cached.llamaUrl !== env.LLAMA_URL || cached.mode !== env.SWITCHYARD_ENV) {
    const result = parseConfig(env);
    let config: Config | ProxyError;
    if (result.ok) config = result.config;
    else {
      // The answer goes to anyone (it comes before the key is checked): it names the fields, not the
      // values; the log has everything.
      const told = configErrorMessages(result.problems, env);
      console.error(told.log);
      config = new ProxyError({ status: 500, type: "server_error", code: "config_error", param: result.problems[0]?.field ?? null, message: told.public });
    }
    cached = { raw: env.SWITCHYARD_CONFIG, llamaUrl: env.LLAMA_URL, mode: env.SWITCHYARD_ENV, config, secrets: secretNames(config instanceof ProxyError ? null : config), values: config instanceof ProxyError ? [] : config.secrets.values };
  }
  // Every route loads the configuration before it reaches an upstream: the secrets it names are known
  // from here on, so upstream text quoting them is redacted (src/errors/redact-secrets.ts).
  // Once per environment object (workerd hands an isolate's requests the same one): reading every
  // secret's variable on each of a request's several loads cost about 1 % of its CPU (issue 47).
  if (cached.rememberedIn !== env) {
    rememberSecrets(env, cached.secrets);
    if (cached.values.length) rememberSecretValues(cached.values);
    cached.rememberedIn = env;
  }
  if (cached.config instanceof ProxyError) throw cached.config;
  return cached.config;
}
