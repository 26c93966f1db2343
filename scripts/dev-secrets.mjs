// Hands the secrets `npm start` generates (the serve token, the admin token) to `wrangler dev` through a
// file readable by the owner only, never its command line (any local user reads argv with `ps`).
//
// wrangler 4.156 loads one of these (getVarsForDev): the `--env-file` files if any are given; else
// `.dev.vars.<env>` or `.dev.vars`; else `.env`, `.env.local`, `.env.<env>`, `.env.<env>.local`. Passing
// `--env-file` switches `.dev.vars` off, so the plan below keeps what the user had: their own
// `--env-file`s stay; a `.dev.vars` is copied into the file (its `$` escaped, since env files are
// expanded and `.dev.vars` is not); the default `.env` files are passed before ours.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";

const falsy = (/** @type {string | undefined} */ v) => v !== undefined && /^(false|0|no)$/i.test(v);

/**
 * `secrets` (names to values) as an env file for wrangler dev, given what it would load by itself.
 * Returns the file's text, the `--env-file` paths to pass before it (absolute), and environment
 * variables for wrangler that keep its loading rules as they were.
 * @param {{ configDir: string, env?: string, envFiles?: string[], secrets: Record<string, string>, processEnv?: NodeJS.ProcessEnv }} options
 * @returns {{ text: string, before: string[], wranglerEnv: Record<string, string> }}
 */
export function devSecretsPlan({ configDir, env, envFiles = [], secrets, processEnv = process.env }) {
  const lines = Object.entries(secrets).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || !/^[A-Za-z0-9_.~+/=-]*$/.test(v)) throw new Error(`dev secret ${k} must be a name and a token without quotes or spaces`);
    return `${k}=${v}`;
  });
  const ours = `${lines.join("\n")}\n`;
  if (envFiles.length) return { text: ours, before: [], wranglerEnv: {} };
  const devVars = [env !== undefined ? resolve(configDir, `.dev.vars.${env}`) : null, resolve(configDir, ".dev.vars")].find((p) => p && existsSync(p));
  if (devVars) {
    // Read as `.dev.vars` is (dotenv, no expansion): every `$` escaped, and process.env left out.
    const text = readFileSync(devVars, "utf8").replaceAll("$", "\\$");
    return { text: `${text}\n${ours}`, before: [], wranglerEnv: { CLOUDFLARE_INCLUDE_PROCESS_ENV: "false" } };
  }
  if (falsy(processEnv.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV)) {
    // The user switched .env loading off: load only ours.
    return { text: ours, before: [], wranglerEnv: { CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true", CLOUDFLARE_INCLUDE_PROCESS_ENV: "false" } };
  }
  const defaults = [".env", ".env.local", ...(env !== undefined ? [`.env.${env}`, `.env.${env}.local`] : [])].map((p) => resolve(configDir, p));
  return { text: ours, before: defaults.filter((p) => existsSync(p)), wranglerEnv: {} };
}

/**
 * Writes `text` to a new file at `path` with mode 600 (refusing an existing one); removed by `remove()`.
 * @param {string} path
 * @param {string} text
 */
export function writeOwnerOnly(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  rmSync(path, { force: true });
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return { path, remove: () => rmSync(path, { force: true }) };
}
