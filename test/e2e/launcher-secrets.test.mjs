// The tokens `npm start` generates never appear on a command line (any local user reads argv with
// `ps`): they reach wrangler in an owner-only env file, removed when the launcher stops, and a user's
// own .dev.vars or .env files still load exactly as wrangler would load them without it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_getVarsForDev } from "wrangler";
import { devSecretsPlan, writeOwnerOnly } from "../../scripts/dev-secrets.mjs";
import { startLauncher } from "../support/switchyard-dev.mjs";

const SECRETS = { SERVE_TOKEN: "s3rve-Tok_en", ADMIN_TOKEN: "adm1n-Tok_en" };

/**
 * What wrangler loads for a config in `dir`: by itself, and with the plan's --env-file list and environment.
 * @param {string} dir
 * @param {string} [env]
 */
function loaded(dir, env) {
  const configPath = join(dir, "wrangler.toml");
  const own = unstable_getVarsForDev(configPath, undefined, { PLAIN: "p" }, env, true);
  const plan = devSecretsPlan({ configDir: dir, env, secrets: SECRETS, processEnv: {} });
  const file = writeOwnerOnly(join(dir, ".wrangler/dev-secrets.env"), plan.text);
  const saved = { ...process.env };
  Object.assign(process.env, plan.wranglerEnv);
  try {
    return { own, planned: unstable_getVarsForDev(configPath, [...plan.before, file.path], { PLAIN: "p" }, env, true), mode: statSync(file.path).mode & 0o777 };
  } finally {
    for (const k of Object.keys(plan.wranglerEnv)) if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
}

const secret = (/** @type {string} */ value) => ({ type: "secret_text", value });

describe("the plan keeps what wrangler would load by itself", () => {
  const tricky = [
    "HOME_REF=$HOME",
    "BRACED=${PATH}",
    "ESCAPED=\\$NOT",
    'SWITCHYARD_CONFIG={"models":{"m":{"targets":[{"kind":"browser","model":"x$y"}]}}}',
    "SINGLE='it is $literal'",
    'DOUBLE="line one\\nline two $X"',
    "HASH=value # a comment",
  ].join("\n");

  it("a .dev.vars, $ and quotes included, plus the generated tokens; the file is mode 600", () => {
    const dir = mkdtempSync(join(tmpdir(), "dev-secrets-"));
    try {
      writeFileSync(join(dir, "wrangler.toml"), 'name = "t"\n');
      writeFileSync(join(dir, ".dev.vars"), tricky);
      writeFileSync(join(dir, ".env"), "FROM_DOT_ENV=1\n");
      const { own, planned, mode } = loaded(dir);
      assert.equal(own.HOME_REF.value, "$HOME");
      assert.equal(own.FROM_DOT_ENV, undefined, ".dev.vars wins over .env");
      assert.deepEqual(planned, { ...own, SERVE_TOKEN: secret(SECRETS.SERVE_TOKEN), ADMIN_TOKEN: secret(SECRETS.ADMIN_TOKEN) });
      assert.equal(mode, 0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with --env staging: .dev.vars.staging first", () => {
    const dir = mkdtempSync(join(tmpdir(), "dev-secrets-"));
    try {
      writeFileSync(join(dir, "wrangler.toml"), 'name = "t"\n');
      writeFileSync(join(dir, ".dev.vars"), "WHICH=plain\n");
      writeFileSync(join(dir, ".dev.vars.staging"), "WHICH=staging\n");
      const { own, planned } = loaded(dir, "staging");
      assert.equal(own.WHICH.value, "staging");
      assert.deepEqual(planned, { ...own, SERVE_TOKEN: secret(SECRETS.SERVE_TOKEN), ADMIN_TOKEN: secret(SECRETS.ADMIN_TOKEN) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("no .dev.vars: the .env files, in wrangler's order, expanded as wrangler expands them", () => {
    const dir = mkdtempSync(join(tmpdir(), "dev-secrets-"));
    try {
      writeFileSync(join(dir, "wrangler.toml"), 'name = "t"\n');
      writeFileSync(join(dir, ".env"), "A=1\nB=from-env\nREF=${A}-x\n");
      writeFileSync(join(dir, ".env.local"), "B=from-local\n");
      const { own, planned } = loaded(dir);
      assert.equal(own.B.value, "from-local");
      assert.equal(own.REF.value, "1-x");
      assert.deepEqual(planned, { ...own, SERVE_TOKEN: secret(SECRETS.SERVE_TOKEN), ADMIN_TOKEN: secret(SECRETS.ADMIN_TOKEN) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Every process's command line this user can read, as one string each. */
function commandLines() {
  const out = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      out.push({ pid, cmd: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ") });
    } catch {}
  }
  return out;
}

it("npm start: the generated tokens are in no process's command line, and the serve link and admin token work", async () => {
  const proxy = await startLauncher();
  let secretsFile;
  try {
    const serve = proxy.logs().match(/#serve=([\w-]+)/)?.[1];
    assert.ok(serve, `no serve link in:\n${proxy.logs()}`);
    const adminFile = `.wrangler/admin-token.${proxy.port}`;
    const admin = readFileSync(adminFile, "utf8").trim();
    secretsFile = `.wrangler/dev-secrets.${proxy.port}.env`;
    assert.equal(statSync(secretsFile).mode & 0o777, 0o600);
    assert.equal(statSync(adminFile).mode & 0o777, 0o600);

    const lines = commandLines();
    assert.ok(lines.some((l) => l.cmd.includes("wrangler") && l.cmd.includes(`--port ${proxy.port}`)), "the wrangler process is among those read");
    for (const { pid, cmd } of lines) {
      assert.ok(!cmd.includes(serve), `the serve token is on process ${pid}'s command line: ${cmd}`);
      assert.ok(!cmd.includes(admin), `the admin token is on process ${pid}'s command line: ${cmd}`);
    }

    const ticket = await fetch(`${proxy.url}/v1/sessions/ticket`, { method: "POST", headers: { authorization: `Bearer ${serve}` } });
    assert.equal(ticket.status, 200, await ticket.clone().text());
    const status = await fetch(`${proxy.url}/v1/admin/status`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(status.status, 200, await status.clone().text());
  } finally {
    await proxy.stop();
  }
  assert.equal(existsSync(secretsFile), false, "the secrets file goes when the launcher stops");
});
