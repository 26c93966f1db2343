#!/usr/bin/env node
// `npm start -- <args>`: validates the configuration with the Worker's own schema, optionally starts a
// local llama-server (LLAMA_MODEL=./model.gguf), then runs `wrangler dev` with every argument after
// `--` passed through unchanged (plus SWITCHYARD_ENV=dev). With LLAMA_MODEL it also serves that GGUF
// file to browser tabs (scripts/serve-gguf.mjs, LLAMA_GGUF), so one file serves both. Stops its children when it stops. The tokens
// it generates reach wrangler through an owner-only env file (scripts/dev-secrets.mjs), never argv.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseConfig } from "../src/config/config.ts";
import { firstFreePort, portInUse } from "./dev-port.mjs";
import { devSecretsPlan, writeOwnerOnly } from "./dev-secrets.mjs";
import { findLlamaServerBinary, llamaServerHelp } from "./find-llama-server.mjs";
import { serveGguf } from "./serve-gguf.mjs";

// wrangler's API is one 15 MB CommonJS file: `require` loads it ~0.4 CPU-s sooner than `import`, which
// first scans all of it for its export names (cjs-module-lexer) on every start.
/** @type {typeof import("wrangler")} */
const { unstable_readConfig, unstable_getVarsForDev } = createRequire(import.meta.url)("wrangler");

const args = process.argv.slice(2);
const log = (/** @type {string} */ msg) => process.stderr.write(`[switchyard] ${msg}\n`);

// The `wrangler dev` flags the launcher reads too (every argument still goes to wrangler unchanged;
// the others are wrangler's to check).
const { values: wranglerFlags } = parseArgs({
  args,
  strict: false,
  allowPositionals: true,
  options: {
    config: { type: "string", short: "c" },
    env: { type: "string", short: "e" },
    "env-file": { type: "string", multiple: true },
    var: { type: "string", multiple: true },
    ip: { type: "string" },
    port: { type: "string" },
  },
});
/** A flag's value (a flag given without one, which wrangler refuses, counts as absent). */
const flag = (/** @type {string | boolean | undefined} */ v) => (typeof v === "string" ? v : undefined);
/** Every value of a repeatable flag (`--env-file a --env-file=b`). */
const flags = (/** @type {Array<string | boolean> | undefined} */ vs) => (vs ?? []).filter((v) => typeof v === "string");

const wranglerConfig = unstable_readConfig({ config: flag(wranglerFlags.config) ?? "wrangler.toml" });
const wranglerEnvName = flag(wranglerFlags.env);
const userEnvFiles = flags(wranglerFlags["env-file"]);

/** The variables the Worker will see: [vars], then .dev.vars (or the env files), then each --var K:V (last wins). */
function devVars() {
  const config = wranglerConfig;
  /** @type {Record<string, unknown>} */
  const vars = {};
  for (const [k, v] of Object.entries(unstable_getVarsForDev(config.configPath, userEnvFiles.length ? userEnvFiles : undefined, config.vars, wranglerEnvName, true))) {
    vars[k] = typeof v === "object" && v && "value" in v ? v.value : v;
  }
  for (const spec of flags(wranglerFlags.var)) {
    const at = spec.indexOf(":");
    if (at > 0) vars[spec.slice(0, at)] = spec.slice(at + 1);
  }
  return vars;
}

const vars = devVars();
const checked = parseConfig({ ...vars, SWITCHYARD_ENV: "dev" });
if (!checked.ok) {
  log("the configuration is invalid, so the proxy was not started:");
  for (const p of checked.problems) log(`  ${p.field}: ${p.message}`);
  log("fix it in wrangler.toml [vars], .dev.vars or the --var arguments (docs/configuration.md).");
  process.exit(1);
}
const config = checked.config;

// The port wrangler will listen on, decided here so the printed links are right: one that was asked
// for (--port, or [dev] port in wrangler.toml) must be free; otherwise the first free one from 8787.
const linkHost = flag(wranglerFlags.ip) ?? "127.0.0.1";
const bindHost = flag(wranglerFlags.ip) ?? wranglerConfig.dev?.ip ?? "localhost";
const askedPort = flag(wranglerFlags.port) ?? (wranglerConfig.dev?.port !== undefined ? String(wranglerConfig.dev.port) : undefined);
/** @type {string[]} */
const portArgs = [];
let devPort = askedPort;
if (askedPort !== undefined) {
  if (await portInUse(Number(askedPort), bindHost, linkHost)) {
    log(`port ${askedPort} is already in use (another npm start or wrangler dev?), so the proxy was not started: stop that server, or choose another port with npm start -- --port <n>.`);
    process.exit(1);
  }
} else {
  devPort = String(await firstFreePort(8787, 11, bindHost, linkHost));
  if (devPort !== "8787") log(`port 8787 is in use; using ${devPort}.`);
  portArgs.push("--port", devPort);
}

/** @type {import("node:child_process").ChildProcess[]} */
const children = [];
let stopping = false;
function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  setTimeout(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    process.exit(code);
  }, 3000).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null))).then(() => process.exit(code));
}
process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));

/** `--var LLAMA_GGUF:<url>` when the launcher serves LLAMA_MODEL's file to tabs. */
/** @type {string[]} */
const ggufArgs = [];
if (process.env.LLAMA_MODEL) {
  const model = resolve(process.env.LLAMA_MODEL);
  if (!existsSync(model)) {
    log(`LLAMA_MODEL=${process.env.LLAMA_MODEL} does not exist.`);
    process.exit(1);
  }
  const bin = findLlamaServerBinary();
  if (!bin) {
    log("LLAMA_MODEL is set but no llama-server binary was found.");
    for (const line of llamaServerHelp()) log(`  ${line}`);
    process.exit(1);
  }
  const url = new URL(config.llamaUrl);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const extra = (process.env.LLAMA_ARGS ?? "").split(/\s+/).filter(Boolean);
  log(`starting llama-server (${bin}) with ${model} on ${url.hostname}:${port}`);
  const llama = spawn(bin, ["-m", model, "--host", url.hostname, "--port", port, ...extra], { stdio: ["ignore", "ignore", "inherit"] });
  llama.on("exit", (code, signal) => {
    if (!stopping) {
      log(`llama-server exited (${signal ?? code}); stopping.`);
      stopAll(1);
    }
  });
  children.push(llama);
  // The same file for tabs (llama.cpp in WebAssembly): offered on the page as its file name.
  if (!vars.LLAMA_GGUF) {
    const gguf = await serveGguf(model, linkHost);
    process.on("exit", gguf.close);
    ggufArgs.push("--var", `LLAMA_GGUF:${gguf.url}`);
    log(`tabs can serve the same model: ${gguf.url}`);
  }
}

const where = `http://${linkHost}:${devPort}`;
log(config.models ? `serving ${Object.keys(config.models).join(", ")} on ${where}` : `serving every model name from ${config.llamaUrl} on ${where}`);

// Browser sessions need a serve credential, in dev too. Without one, generate a token for this run; it
// is printed only inside the page URL's fragment (never sent to the server in a URL).
/** @type {{ SERVE_TOKEN?: string, ADMIN_TOKEN?: string }} */
const generated = {};
if (!vars.SERVE_TOKEN) {
  generated.SERVE_TOKEN = randomBytes(24).toString("base64url");
  log(`serve from this browser: ${where}/#serve=${generated.SERVE_TOKEN}`);
}
// Team keys: with none created, dev serves without keys; the admin API needs ADMIN_TOKEN. Without
// one, generate it for this run and keep it (only) in .wrangler/admin-token.<port> while the server
// runs, where `npm run keys` finds it for a local SWITCHYARD_URL; it goes when the launcher stops. It
// is printed only in the status page link's fragment, which the page reads and removes.
if (!vars.ADMIN_TOKEN) {
  generated.ADMIN_TOKEN = randomBytes(32).toString("base64url");
  const tokenFile = writeOwnerOnly(`.wrangler/admin-token.${devPort}`, generated.ADMIN_TOKEN + "\n");
  process.on("exit", tokenFile.remove);
  log(`status page: ${where}/status.html#admin=${generated.ADMIN_TOKEN}`);
}
// The generated tokens go to wrangler in an env file only this user can read (mode 600), for this run.
/** @type {string[]} */
const secretArgs = [];
/** @type {Record<string, string>} */
let wranglerEnv = {};
if (Object.keys(generated).length) {
  const plan = devSecretsPlan({ configDir: dirname(wranglerConfig.configPath ?? resolve("wrangler.toml")), env: wranglerEnvName, envFiles: userEnvFiles, secrets: generated });
  const file = writeOwnerOnly(resolve(`.wrangler/dev-secrets.${devPort}.env`), plan.text);
  process.on("exit", file.remove);
  for (const f of [...plan.before, file.path]) secretArgs.push("--env-file", f);
  wranglerEnv = plan.wranglerEnv;
}
log(`auth: dev mode serves without keys until you create one (SWITCHYARD_URL=${where} npm run keys -- create --name <you> --scopes chat); then every request needs a key.`);
execFileSync(process.execPath, ["worker/build.mjs"], { stdio: "inherit" });

const wrangler = spawn(resolve("node_modules/.bin/wrangler"), ["dev", "--var", "SWITCHYARD_ENV:dev", ...ggufArgs, ...secretArgs, ...portArgs, ...args], {
  stdio: "inherit",
  env: { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env, ...wranglerEnv },
});
children.push(wrangler);
wrangler.on("exit", (code) => stopAll(code ?? 0));

