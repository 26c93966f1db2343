#!/usr/bin/env node
// What the Worker bundle is made of, and what each part costs gzipped and to parse: the bundle
// `wrangler deploy --dry-run` builds (minified), its source map read to give every byte to the
// package or src/ folder it came from. A part's gzip cost is the bundle's gzip size minus the gzip
// size of the bundle with that part's bytes cut out (gzip does not care that the rest no longer
// parses), so what a part shares with the rest is not counted twice. Parse: V8 compiling the bundle
// as a module (`vm.SourceTextModule`, its functions pre-parsed as in any isolate's start), median of
// fresh sources (each with a unique comment, so V8's compilation cache never answers).
//   node bench/bundle-parts.mjs [--write] [--rev <git revision>] [--parse-runs 15]
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { decode } from "@jridgewell/sourcemap-codec";
import { replaceMarkedBlock } from "./doc-block.mjs";
import { buildWorker, checkoutRevision } from "./overhead/runtimes.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({ options: { write: { type: "boolean", default: false }, rev: { type: "string" }, "parse-runs": { type: "string", default: "15" } } });

/** What a part buys, for the table (hand-written; a part not listed says so). */
const BUYS = {
  "src/toolcalls": "tool calls recovered from model text: 39 dialects, scoring, the streaming rewriter",
  "src/routing": "plan, admission, placement, attempts and failover, continuation",
  "src/upstreams": "llama-server and browser-session adapters, their wire formats and errors",
  "src/api": "the doors: Chat, Responses (with its store and WebSocket), Messages, Completions",
  "src/routes": "the route handlers: admin, models, sessions, batches, the Responses socket",
  "src/auth": "keys, scopes, per-key limits (KeyGate), usage",
  "src/batch": "the Batch API (its Durable Object, lines, rows)",
  "src/observability": "the request log and OTLP traces",
  "src/health": "upstream health, circuit breaker, /metrics",
  "src/config": "the configuration's schema and loader",
  "src/schemas": "request schemas (zod/mini) and llama-server's field table",
  "src/middleware": "request id, CORS, the log's middleware, authentication",
  "src/responders": "SSE and JSON responders, commit and heartbeats",
  "src/http": "body reading, decompression, fetch with a fresh-connection retry",
  "zod": "every boundary's schema (zod/mini: request bodies, config, Durable Object answers)",
  "@cfworker/json-schema": "validating tool-call arguments against the client's JSON Schema (workerd forbids code generation, so no Ajv)",
  "hono": "the router and middleware chain",
  "@noble/ciphers": "XChaCha20-Poly1305 for sealed reasoning (Responses `encrypted_content`)",
  "@noble/hashes": "SHA-256/HMAC, synchronous (usage labels in a Durable Object, the sealer's key)",
  "jsonrepair": "the lenient read of a model's broken JSON arguments",
  "fzstd": "zstd request bodies (`Content-Encoding: zstd`, which workerd does not decode)",
  "eventsource-parser": "llama-server's SSE frames",
  re2js: "client patterns in linear time (replaced by src/toolcalls/scoring/linear-regex.ts)",
};

/** The part a source path belongs to: a package, or a folder of src/. */
function partOf(/** @type {string} */ source) {
  const nm = source.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = source.slice(nm + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "?");
  }
  const src = source.indexOf("src/");
  if (src < 0) return "(other)";
  const parts = source.slice(src).split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : "src (top)";
}

const tree = flags.rev ? checkoutRevision(flags.rev) : null;
const build = buildWorker(tree?.dir ?? ROOT);
try {
  const code = readFileSync(build.script, "utf8");
  const map = JSON.parse(readFileSync(`${build.script}.map`, "utf8"));
  const lines = code.split("\n");
  const mappings = decode(map.mappings);
  /** Per part: the [start, end) character ranges of the bundle that came from it. */
  /** @type {Map<string, Array<[number, number]>>} */
  const ranges = new Map();
  let lineStart = 0;
  for (let l = 0; l < lines.length; l++) {
    const segs = mappings[l] ?? [];
    for (let k = 0; k < segs.length; k++) {
      const seg = segs[k];
      const end = k + 1 < segs.length ? segs[k + 1][0] : lines[l].length;
      const part = seg[1] !== undefined ? partOf(map.sources[seg[1]]) : "(unmapped)";
      const list = ranges.get(part) ?? [];
      list.push([lineStart + seg[0], lineStart + end]);
      ranges.set(part, list);
    }
    lineStart += lines[l].length + 1;
  }
  const gz = (/** @type {string} */ s) => gzipSync(Buffer.from(s), { level: 9 }).length;
  const total = { bytes: Buffer.byteLength(code), gzip: gz(code) };
  const rows = [...ranges].map(([part, rs]) => {
    const keep = new Uint8Array(code.length).fill(1);
    let chars = 0;
    for (const [a, b] of rs) {
      keep.fill(0, a, b);
      chars += b - a;
    }
    let without = "";
    let runStart = -1;
    for (let i = 0; i <= code.length; i++) {
      if (i < code.length && keep[i]) {
        if (runStart < 0) runStart = i;
      } else if (runStart >= 0) {
        without += code.slice(runStart, i);
        runStart = -1;
      }
    }
    return { part, chars, gzip: total.gzip - gz(without) };
  });
  rows.sort((a, b) => b.gzip - a.gzip);

  // Parse time: a child Node (vm.SourceTextModule needs its flag), fresh source each run.
  const parseMs = JSON.parse(
    execFileSync(
      process.execPath,
      [
        "--experimental-vm-modules",
        "--no-warnings",
        "-e",
        `const vm=require("node:vm");const src=require("node:fs").readFileSync(${JSON.stringify(build.script)},"utf8");const t=[];for(let i=0;i<${Number(flags["parse-runs"])};i++){const s=src+"\\n//"+i+Math.random();const t0=performance.now();new vm.SourceTextModule(s);t.push(performance.now()-t0)}t.sort((a,b)=>a-b);console.log(JSON.stringify(t[t.length>>1]))`,
      ],
      { encoding: "utf8" },
    ),
  );

  const kib = (/** @type {number} */ n) => (n / 1024).toFixed(1);
  const rev = flags.rev ?? execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const out = [
    `\`node bench/bundle-parts.mjs${flags.rev ? ` --rev ${flags.rev}` : ""}\` — ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, at ${rev}: the bundle \`wrangler deploy --dry-run\` builds is **${kib(total.bytes)} KiB, ${kib(total.gzip)} KiB gzipped** (gzip -9); V8 compiles it as a module in **${parseMs.toFixed(1)} ms** (Node ${process.version}, median of ${flags["parse-runs"]}).`,
    "",
    "| part | minified KiB | gzip KiB (the bundle's gzip size without it, subtracted) | what it buys |",
    "|---|---:|---:|---|",
    ...rows.filter((r) => r.chars > 512).map((r) => `| ${r.part} | ${kib(r.chars)} | ${kib(r.gzip)} | ${BUYS[/** @type {keyof typeof BUYS} */ (r.part)] ?? ""} |`),
    `| (parts under 0.5 KiB) | ${kib(rows.filter((r) => r.chars <= 512).reduce((s, r) => s + r.chars, 0))} | ${kib(rows.filter((r) => r.chars <= 512).reduce((s, r) => s + r.gzip, 0))} | |`,
  ].join("\n");
  console.log(out);
  if (flags.write) {
    const path = join(ROOT, "docs/benchmarks.md");
    const start = "<!-- bundle-parts:start (written by node bench/bundle-parts.mjs --write) -->";
    const end = "<!-- bundle-parts:end -->";
    writeFileSync(path, replaceMarkedBlock(readFileSync(path, "utf8"), start, end, `${start}\n\n${out}\n\n${end}`, "## The Worker bundle, part by part"));
  }
} finally {
  build.cleanup();
  tree?.cleanup();
}
