#!/usr/bin/env node
// `npm run keys -- <command>`: manage a Switchyard's team keys over its admin API (/v1/admin/*).
//   create --name alice --scopes chat,serve [--models m1,m2] [--rpm 60] [--concurrency 4] [--tokens-per-day 200000]
//          [--default-max-tokens 2048] [--browser allow|deny] [--serves alice,bob] [--priority N] [--capture on|off] [--max-service-tier flex|default|priority]
//   update <id> [--browser allow|deny|default] [--serves alice,bob|'*'] [--priority N|default] [--capture on|off] [--max-service-tier flex|default|priority]
//   list · revoke <id> · usage [<id>] [--since YYYY-MM-DD]
//   --json prints machine-readable output (use `npm run -s keys -- …` to keep npm's banner out of it).
// Reads SWITCHYARD_URL (default http://127.0.0.1:8787) and SWITCHYARD_ADMIN_TOKEN. Against a local
// `npm start`, the token the launcher generated (.wrangler/admin-token.<port>) is used when none is set.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const USAGE = `usage: npm run keys -- <command> [options]
  create --name <name> --scopes chat,serve,admin [--models m1,m2] [--rpm N] [--concurrency N] [--tokens-per-day N]
         [--default-max-tokens N] [--browser allow|deny] [--serves <key names or ids>] [--priority N] [--capture on|off] [--max-service-tier T]
  update <id> [--browser allow|deny|default] [--serves <key names or ids>|'*'] [--priority N|default] [--capture on|off] [--max-service-tier T]
  list
  revoke <id>
  usage [<id>] [--since YYYY-MM-DD]
options: --json (machine-readable output)
  --default-max-tokens  with --tokens-per-day: the max_tokens of a request that sets none (reserved from the day
                        and sent upstream; default the deployment's limits.defaultMaxTokens, 4096)
  --browser   may the key's requests be served by a teammate's browser tab (default: the deployment's browser.default)
  --serves    a serve key: only these keys' requests reach its tabs ('*': every key's, the default)
  --priority  when requests wait for a free slot, higher levels are served first (-1000…1000; default 0)
  --max-service-tier  the highest service_tier its requests are served at (flex, default or priority;
              default: default); asking above it is served at it
  --capture   on: the request log keeps the key's request bodies and answers, secrets redacted (admins read
              them; the key's responses carry x-switchyard-capture: on; needs the log on); default off
environment: SWITCHYARD_URL (default http://127.0.0.1:8787), SWITCHYARD_ADMIN_TOKEN`;

/**
 * The admin API's wire shapes (publicRecord and summarize in src/routes/admin.ts).
 * @typedef {{ rpm?: number, concurrency?: number, tokensPerDay?: number, defaultMaxTokens?: number }} KeyLimits
 * @typedef {{ id: string, name: string, scopes: string[], models: string[] | null, limits: KeyLimits, browser: "allow" | "deny" | null, serves: string[] | null, priority: number, capture: boolean, created_at: string, revoked_at: string | null }} PublicKey
 * @typedef {{ day: string, model: string, backend: string, kind: "llama" | "browser" | "none", requests: number, prompt_tokens: number, completion_tokens: number, errors: number }} UsageRow
 */

/**
 * The flags and positionals of `argv`; an unknown flag is refused with the usage.
 * @param {string[]} argv
 */
function parseCommandLine(argv) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: "string" },
        scopes: { type: "string" },
        models: { type: "string" },
        rpm: { type: "string" },
        concurrency: { type: "string" },
        "tokens-per-day": { type: "string" },
        "default-max-tokens": { type: "string" },
        browser: { type: "string" },
        serves: { type: "string" },
        priority: { type: "string" },
        capture: { type: "string" },
        "max-service-tier": { type: "string" },
        since: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean" },
      },
    });
  } catch (e) {
    fail(`${e instanceof Error ? e.message : e}\n${USAGE}`);
  }
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message, code = 1) {
  process.stderr.write(`keys: ${message}\n`);
  process.exit(code);
}

/**
 * @param {string | undefined} value
 * @param {string} name the flag's name
 */
function limit(value, name) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) fail(`--${name} must be a positive integer`);
  return n;
}

/**
 * `--browser`: the key's policy, or null for the deployment's default (`default`, update only).
 * @param {string | undefined} value
 * @param {boolean} allowDefault
 * @returns {"allow" | "deny" | null | undefined}
 */
function browserFlag(value, allowDefault) {
  if (value === undefined) return undefined;
  if (value === "allow" || value === "deny") return value;
  if (allowDefault && value === "default") return null;
  fail(`--browser must be allow or deny${allowDefault ? " (or default: the deployment's browser.default)" : ""}`);
}

/**
 * `--priority`: the key's level in the admission queue; `default` (update only) is null, back to 0.
 * @param {unknown} value
 * @param {boolean} allowDefault
 * @returns {number | null | undefined}
 */
function priorityFlag(value, allowDefault) {
  if (value === undefined) return undefined;
  if (allowDefault && value === "default") return null;
  const n = Number(value);
  if (Number.isInteger(n) && n >= -1000 && n <= 1000) return n;
  fail(`--priority must be an integer from -1000 to 1000${allowDefault ? " (or default: 0)" : ""}`);
}

/**
 * `--max-service-tier`: flex, default or priority.
 * @param {string | undefined} value
 * @returns {"flex" | "default" | "priority" | undefined}
 */
function tierFlag(value) {
  if (value === undefined) return undefined;
  if (value === "flex" || value === "default" || value === "priority") return value;
  fail("--max-service-tier must be flex, default or priority");
}

/**
 * `--capture`: on or off (the request log keeps the key's request bodies and answers).
 * @param {string | undefined} value
 * @returns {boolean | undefined}
 */
function captureFlag(value) {
  if (value === undefined) return undefined;
  if (value === "on" || value === "off") return value === "on";
  fail("--capture must be on or off");
}

/**
 * `--serves`: key names or ids (comma-separated), or `*` for every key (null).
 * @param {string | undefined} value
 * @returns {string[] | null | undefined}
 */
function servesFlag(value) {
  if (value === undefined) return undefined;
  if (value.trim() === "*") return null;
  const list = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) fail("--serves needs key names or ids (comma-separated), or '*' for every key");
  return list;
}

/** @param {string} base */
function adminToken(base) {
  if (process.env.SWITCHYARD_ADMIN_TOKEN) return process.env.SWITCHYARD_ADMIN_TOKEN;
  const url = new URL(base);
  if (["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    try {
      return readFileSync(`.wrangler/admin-token.${url.port || "80"}`, "utf8").trim();
    } catch {}
  }
  fail("set SWITCHYARD_ADMIN_TOKEN to the deployment's ADMIN_TOKEN (or an admin key).");
}

/**
 * The admin API's JSON answer (src/routes/admin.ts), or a sentence and exit.
 * @template T
 * @param {string} base
 * @param {string} token
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
async function api(base, token, method, path, body) {
  let res;
  try {
    res = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    const { cause, message } = /** @type {Error & { cause?: { code?: string } }} */ (e);
    fail(`could not reach ${base} (${cause?.code ?? message}). Is SWITCHYARD_URL right, and is the proxy running?`);
  }
  const text = await res.text();
  /** @type {T & { error?: { message?: string, code?: string } }} */
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    fail(`${method} ${path} answered HTTP ${res.status} without JSON. Is SWITCHYARD_URL a Switchyard?`);
  }
  if (!res.ok) fail(`${json.error?.message ?? `HTTP ${res.status}`} (${json.error?.code ?? res.status})`);
  return json;
}

/** @param {Array<Array<string | number | null>>} rows a table, its header first */
const pad = (rows) => {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((v, i) => String(v).padEnd(widths[i])).join("  ").trimEnd()).join("\n");
};
/** @param {PublicKey} k */
const policyText = (k) => `${k.browser ? `; browser ${k.browser}` : ""}${k.serves ? `; serves ${k.serves.join(",")}` : ""}${k.priority ? `; priority ${k.priority}` : ""}${k.capture ? "; capture on" : ""}`;
/**
 * A serve key's `serves` by name (ids the list does not know stay ids); `-` for other keys.
 * @param {PublicKey} k
 * @param {PublicKey[]} all
 */
const servesText = (k, all) => (!k.scopes.includes("serve") ? "-" : k.serves ? k.serves.map((id) => all.find((o) => o.id === id)?.name ?? id).join(",") : "*");
/** @param {KeyLimits} l */
const limitsText = (l) => [l.rpm && `${l.rpm} rpm`, l.concurrency && `${l.concurrency} streams`, l.tokensPerDay && `${l.tokensPerDay} tokens/day`, l.defaultMaxTokens && `max_tokens ${l.defaultMaxTokens} by default`].filter(Boolean).join(", ") || "-";

async function main() {
  const { values: flags, positionals: positional } = parseCommandLine(process.argv.slice(2));
  const [command, arg] = positional;
  if (!command || flags.help) {
    process.stdout.write(USAGE + "\n");
    process.exit(command || flags.help ? 0 : 1);
  }
  const base = process.env.SWITCHYARD_URL || "http://127.0.0.1:8787";
  const token = adminToken(base);
  /**
   * @param {string} human
   * @param {unknown} json what `--json` prints instead
   */
  const out = (human, json) => process.stdout.write((flags.json ? JSON.stringify(json, null, 2) : human) + "\n");

  switch (command) {
    case "create": {
      if (!flags.name) fail("create needs --name");
      const name = flags.name;
      const scopes = String(flags.scopes ?? "chat").split(",").map((s) => s.trim()).filter(Boolean);
      const models = flags.models ? String(flags.models).split(",").map((s) => s.trim()).filter(Boolean) : undefined;
      const limits = {
        rpm: limit(flags.rpm, "rpm"),
        concurrency: limit(flags.concurrency, "concurrency"),
        tokensPerDay: limit(flags["tokens-per-day"], "tokens-per-day"),
        defaultMaxTokens: limit(flags["default-max-tokens"], "default-max-tokens"),
      };
      const browser = browserFlag(flags.browser, false);
      const serves = servesFlag(flags.serves);
      const priority = priorityFlag(flags.priority, false);
      const capture = captureFlag(flags.capture);
      const maxServiceTier = tierFlag(flags["max-service-tier"]);
      /** @type {PublicKey & { key: string }} */
      const created = await api(base, token, "POST", "/v1/admin/keys", {
        name,
        scopes,
        ...(models ? { models } : {}),
        limits: JSON.parse(JSON.stringify(limits)),
        ...(browser ? { browser } : {}),
        ...(serves ? { serves } : {}),
        ...(priority ? { priority } : {}),
        ...(capture ? { capture } : {}),
        ...(maxServiceTier ? { maxServiceTier } : {}),
      });
      out(
        `created key ${created.id} "${created.name}" (${created.scopes.join(", ")}${policyText(created)})\n\n  ${created.key}\n\nThis is the only time the key is shown: hand it to ${created.name} now. Use it as Authorization: Bearer <key> (or x-api-key) against ${base}/v1.`,
        { id: created.id, key: created.key, name: created.name, scopes: created.scopes, models: created.models, limits: created.limits, browser: created.browser, serves: created.serves, priority: created.priority, capture: created.capture },
      );
      return;
    }
    case "update": {
      if (!arg) fail("update needs a key id (npm run keys -- list shows them)");
      const browser = browserFlag(flags.browser, true);
      const serves = servesFlag(flags.serves);
      const priority = priorityFlag(flags.priority, true);
      const capture = captureFlag(flags.capture);
      const maxServiceTier = tierFlag(flags["max-service-tier"]);
      if (browser === undefined && serves === undefined && priority === undefined && capture === undefined && maxServiceTier === undefined) fail("update needs --browser, --serves, --priority, --capture and/or --max-service-tier");
      /** @type {PublicKey} */
      const k = await api(base, token, "PATCH", `/v1/admin/keys/${encodeURIComponent(arg)}`, {
        ...(browser !== undefined ? { browser } : {}),
        ...(serves !== undefined ? { serves } : {}),
        ...(priority !== undefined ? { priority } : {}),
        ...(capture !== undefined ? { capture } : {}),
        ...(maxServiceTier !== undefined ? { maxServiceTier } : {}),
      });
      out(`updated ${k.id} "${k.name}": browser ${k.browser ?? "default"}${k.serves ? `, serves ${k.serves.join(",")}` : ""}, priority ${k.priority ?? 0}, capture ${k.capture ? "on" : "off"}`, k);
      return;
    }
    case "list": {
      /** @type {{ data: PublicKey[] }} */
      const { data } = await api(base, token, "GET", "/v1/admin/keys");
      out(
        data.length
          ? pad([
              ["ID", "NAME", "SCOPES", "MODELS", "LIMITS", "BROWSER", "SERVES", "CAPTURE", "CREATED", "STATUS"],
              ...data.map((k) => [
                k.id,
                k.name,
                k.scopes.join(","),
                k.models ? k.models.join(",") : "*",
                limitsText(k.limits),
                k.browser ?? "default",
                servesText(k, data),
                k.capture ? "on" : "off",
                k.created_at.slice(0, 10),
                k.revoked_at ? "revoked" : "active",
              ]),
            ])
          : "no keys yet: npm run keys -- create --name <name> --scopes chat",
        data,
      );
      return;
    }
    case "revoke": {
      if (!arg) fail("revoke needs a key id (npm run keys -- list shows them)");
      /** @type {PublicKey} */
      const k = await api(base, token, "DELETE", `/v1/admin/keys/${encodeURIComponent(arg)}`);
      out(`revoked ${k.id} "${k.name}"`, k);
      return;
    }
    case "usage": {
      const q = new URLSearchParams();
      if (arg) q.set("key", arg);
      if (flags.since) q.set("since", flags.since);
      /** @type {{ data: Array<{ key: PublicKey, usage: UsageRow[] }> }} */
      const u = await api(base, token, "GET", `/v1/admin/usage${q.size ? `?${q}` : ""}`);
      /** @type {Array<Array<string | number>>} */
      const rows = [["KEY", "DAY", "MODEL", "BACKEND", "SERVED BY", "REQUESTS", "PROMPT", "COMPLETION", "ERRORS"]];
      for (const d of u.data) for (const r of d.usage) rows.push([d.key.name, r.day, r.model, r.backend || "-", r.kind, r.requests, r.prompt_tokens, r.completion_tokens, r.errors]);
      out(rows.length > 1 ? pad(rows) : "no usage recorded yet", u.data);
      return;
    }
    default:
      fail(`unknown command "${command}"\n${USAGE}`);
  }
}

await main();
