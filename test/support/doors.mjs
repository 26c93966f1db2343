// Several front doors running the same Worker code, for tests and benches of what happens when a
// deployment's requests spread over isolates (docs/architecture.md, "State"). Each door is its own
// `wrangler dev` process (as the launcher runs it: startSwitchyard), with its own
// --port and --inspector-port and so its own isolate and module state. The first door runs
// wrangler.toml and owns the Durable Object classes; each other door runs a generated config that
// binds the first door's classes with `script_name`, so every door talks to one instance of each
// object (a shared --persist-to alone would not: each process would run its own instance on one
// SQLite file). WRANGLER_REGISTRY_PATH is a temp dir, so the dev registry the doors find each other
// through stays local to this run.
//
//   const doors = await startDoors(3, { vars: { SWITCHYARD_CONFIG: {...} } });
//   await fetch(`${doors.any()}/v1/chat/completions`, …);   // a door at random
//   await doors.stop();
//
// `npm start` stays one door; this is for test/multi/ and bench/multi-door.mjs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unstable_readConfig } from "wrangler";
import { freePort } from "./llama-server.mjs";
import { startSwitchyard } from "./switchyard-dev.mjs";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The config of door `i` (i ≥ 1): wrangler.toml's Worker under another name, its Durable Object
 * bindings pointing at the first door's script, no migrations (it defines no classes of its own).
 * @param {string} dir where to write it
 * @param {number} i
 * @returns {string} its path
 */
export function extraDoorConfig(dir, i) {
  const base = unstable_readConfig({ config: join(ROOT, "wrangler.toml") });
  const config = {
    name: `${base.name}-door-${i}`,
    main: base.main,
    compatibility_date: base.compatibility_date,
    compatibility_flags: base.compatibility_flags,
    minify: base.minify,
    keep_names: base.keep_names,
    send_metrics: false,
    assets: base.assets ? { ...base.assets, directory: resolve(ROOT, base.assets.directory ?? "public") } : undefined,
    durable_objects: { bindings: base.durable_objects.bindings.map((/** @type {{ name: string, class_name: string }} */ b) => ({ name: b.name, class_name: b.class_name, script_name: base.name })) },
    vars: base.vars,
  };
  const path = join(dir, `door-${i}.json`);
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/**
 * @typedef {import("./switchyard-dev.mjs").Switchyard} Door
 * @typedef {{ doors: Door[], urls: string[], any(): string, at(i: number): string, stop(): Promise<void>, logs(): string }} Doors
 */

/**
 * Starts `n` doors sharing one set of Durable Objects, and waits until every door reaches them.
 * `ready`: a request that must succeed at every door before it counts as up (default: GET
 * /v1/admin/keys with vars.ADMIN_TOKEN, which reads the shared key store; without one GET /v1/models): a door bound across processes fails for a few seconds
 * until the dev registry connects it, so readiness is that condition, not a sleep.
 * @param {number} n
 * @param {{ vars?: Record<string, unknown>, env?: Record<string, string>, readyTimeoutMs?: number,
 *           ready?: (url: string) => Promise<boolean> }} [options]
 * @returns {Promise<Doors>}
 */
export async function startDoors(n, { vars = {}, env = {}, readyTimeoutMs = 90_000, ready } = {}) {
  const adminToken = typeof vars.ADMIN_TOKEN === "string" ? vars.ADMIN_TOKEN : undefined;
  ready ??= adminToken ? (url) => keysAnswer(url, adminToken) : modelsAnswer;
  const registry = mkdtempSync(join(tmpdir(), "switchyard-registry-"));
  const state = mkdtempSync(join(tmpdir(), "switchyard-doors-"));
  // Generated configs live inside the project (wrangler keeps its build output beside the config).
  const configs = join(ROOT, ".wrangler", "doors", `run-${process.pid}-${Date.now()}`);
  mkdirSync(configs, { recursive: true });
  const shared = { ...env, WRANGLER_REGISTRY_PATH: registry };
  /** @type {Door[]} */
  const doors = [];
  const stop = async () => {
    await Promise.all(doors.map((d) => d.stop()));
    rmSync(registry, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
    rmSync(configs, { recursive: true, force: true });
  };
  try {
    // The first door owns the Durable Object classes, so it is up before the others bind them; the
    // others start at once. Each its own inspector port: three at once would race for the default.
    const door = async (/** @type {number} */ i, /** @type {string[]} */ config) =>
      startSwitchyard({ vars, env: shared, args: [...config, "--inspector-port", String(await freePort()), "--persist-to", join(state, `door-${i}`)], readyTimeoutMs });
    doors.push(await door(0, []));
    const rest = await Promise.allSettled(Array.from({ length: n - 1 }, (_, k) => door(k + 1, ["--config", extraDoorConfig(configs, k + 1)])));
    for (const r of rest) if (r.status === "fulfilled") doors.push(r.value);
    const failed = rest.find((r) => r.status === "rejected");
    if (failed) throw /** @type {PromiseRejectedResult} */ (failed).reason;
    const deadline = Date.now() + readyTimeoutMs;
    for (const d of doors) {
      while (!(await ready(d.url).catch(() => false))) {
        if (Date.now() > deadline) throw new Error(`door ${d.url} did not reach the shared Durable Objects in ${readyTimeoutMs} ms:\n${d.logs().slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const urls = doors.map((d) => d.url);
  return {
    doors,
    urls,
    any: () => /** @type {string} */ (urls[Math.floor(Math.random() * urls.length)]),
    at: (i) => /** @type {string} */ (urls[i % urls.length]),
    stop,
    logs: () => doors.map((d, i) => `--- door ${i} ---\n${d.logs()}`).join("\n"),
  };
}

/** @param {string} url @param {string} token */
async function keysAnswer(url, token) {
  const res = await fetch(`${url}/v1/admin/keys`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status === 200;
}

/** @param {string} url */
async function modelsAnswer(url) {
  const res = await fetch(`${url}/v1/models`);
  await res.arrayBuffer();
  return res.status === 200;
}

/**
 * Makes a key through the admin API at one door and waits until every door knows keys exist (a door
 * that cached "no keys yet" serves keyless requests in open dev mode for up to key-directory.ts's
 * CACHE_MS). Resolves with the key's secret and id.
 * @param {Doors} doors @param {string} adminToken @param {Record<string, unknown>} body `{name, scopes?, limits?, priority?}`
 * @returns {Promise<{ key: string, id: string }>}
 */
export async function createKeyAtDoors(doors, adminToken, body) {
  const res = await fetch(`${doors.any()}/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["chat"], ...body }),
  });
  if (res.status !== 201) throw new Error(`creating key: ${res.status} ${await res.text()}`);
  const made = /** @type {{ key: string, id: string }} */ (await res.json());
  for (const url of doors.urls) {
    for (;;) {
      const r = await fetch(`${url}/v1/models`);
      await r.arrayBuffer();
      if (r.status === 401) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return made;
}

/**
 * Samples each llama-server's `/slots` every `everyMs` until stopped: the most slots busy at once
 * on each (is_processing), and the samples taken.
 * @param {string[]} servers base URLs
 */
export function watchSlots(servers, everyMs = 20) {
  /** @type {Record<string, { max: number, total: number, samples: number, over: number }>} */
  const seen = Object.fromEntries(servers.map((s) => [s, { max: 0, total: 0, samples: 0, over: 0 }]));
  let on = true;
  const loops = servers.map(async (s) => {
    while (on) {
      try {
        const res = await fetch(`${s}/slots`);
        const slots = /** @type {Array<{ is_processing: boolean }>} */ (await res.json());
        const busy = slots.filter((x) => x.is_processing).length;
        const w = /** @type {{ max: number, total: number, samples: number, over: number }} */ (seen[s]);
        w.total = slots.length;
        w.samples++;
        w.max = Math.max(w.max, busy);
        // llama-server queues a request it has no slot for: /slots shows its slots, never more busy than
        // it has; a request over the slots shows as the task queue's length in /metrics instead. Both read.
        const metrics = await fetch(`${s}/metrics`).then((r) => (r.ok ? r.text() : ""));
        const deferred = Number(/llamacpp:requests_deferred\s+([\d.]+)/.exec(metrics)?.[1] ?? 0);
        if (deferred > 0) w.over++;
      } catch {}
      await new Promise((r) => setTimeout(r, everyMs));
    }
  });
  return {
    async stop() {
      on = false;
      await Promise.all(loops);
      return seen;
    },
  };
}
