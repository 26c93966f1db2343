// The layering rule of src/ (docs/architecture.md, "Layout and the layering rule"): each folder of src/
// belongs to a layer, named by its first segment; a file imports only from its own layer or a lower
// one, and no two folders import each other, even through a third. Every import counts, `import type`
// and `import("…")` types too: a type that reaches upward ties the layers as much as a value does.
// And each API's folder, src/api/<surface>/, has one door: from outside the folder only its index.ts
// is imported (docs/architecture.md, "One door per API").
//
//   node scripts/check-layers.mjs     exit 0 and one summary line, or exit 1 listing file:line → target
//
// Imports are read with TypeScript's own scanner (preProcessFile: no type checking, no program), so
// the check takes a fraction of a second and sees exactly the imports the compiler sees.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The layers, lowest first. "." is the files at the top of src/ (app.ts, index.ts). */
const LAYERS = ["lib", "errors", "events", "responders", "schemas", "config", "toolcalls", "http", "observability", "health", "upstreams", "auth", "routing", "api", "batch", "middleware", "routes", "."];

/** The folders under src/api/ that are no API and so no door: the generated wire types every surface is typed by. */
const NOT_DOORS = new Set(["api/wire"]);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.join(root, "src");

/** @param {string} dir @returns {string[]} */
function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

/** A file's folder under src/ ("upstreams/llama", or "." at the top). @param {string} file */
const folderOf = (file) => path.relative(src, path.dirname(file)).split(path.sep).join("/") || ".";
/** @param {string} folder */
const layerOf = (folder) => LAYERS.indexOf(folder.split("/")[0] ?? ".");
/** @param {string} file */
const shown = (file) => path.relative(root, file).split(path.sep).join("/");

/** @typedef {{ from: string; line: number; to: string }} Edge */

const started = performance.now();
const files = sourceFiles(src).sort();
/** @type {string[]} */
const problems = [];
/** @type {Edge[]} */
const edges = [];

for (const file of files) {
  const folder = folderOf(file);
  if (layerOf(folder) < 0) {
    problems.push(`${shown(file)}: the folder src/${folder} is in no layer (add it to LAYERS in scripts/check-layers.mjs and to docs/architecture.md)`);
    continue;
  }
  const text = fs.readFileSync(file, "utf8");
  /** @type {number[]} */
  const lineStarts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  /** The 1-based line of an offset. @param {number} pos */
  const lineOf = (pos) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (/** @type {number} */ (lineStarts[mid]) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    if (!ref.fileName.startsWith(".")) continue; // a package or a runtime module (cloudflare:workers)
    const target = path.resolve(path.dirname(file), ref.fileName);
    if (path.relative(src, target).startsWith("..")) continue;
    edges.push({ from: file, line: lineOf(ref.pos), to: target });
  }
}

// Upward imports: into a higher layer than the file's own.
for (const e of edges) {
  const from = layerOf(folderOf(e.from));
  const to = layerOf(folderOf(e.to));
  if (to > from) problems.push(`${shown(e.from)}:${e.line} → ${shown(e.to)} (upward: ${LAYERS[from]} imports ${LAYERS[to]})`);
}

// Doors: an import into src/api/<surface>/ from outside it names that folder's index.ts.
/** The API folder a folder is in ("api/chat" for "api/chat" and its subfolders), or null. @param {string} folder */
const doorOf = (folder) => {
  const [top, surface] = folder.split("/");
  const door = `${top}/${surface}`;
  return top === "api" && surface !== undefined && !NOT_DOORS.has(door) ? door : null;
};
let doorImports = 0;
for (const e of edges) {
  const door = doorOf(folderOf(e.to));
  if (door === null || doorOf(folderOf(e.from)) === door) continue;
  doorImports++;
  if (folderOf(e.to) !== door || path.basename(e.to) !== "index.ts") {
    problems.push(`${shown(e.from)}:${e.line} → ${shown(e.to)} (behind the door of src/${door}/: from outside that folder import only src/${door}/index.ts)`);
  }
}

// Folder cycles, within a layer too: the strongly connected components of the folder graph (Tarjan).
/** @type {Map<string, Set<string>>} */
const graph = new Map();
for (const e of edges) {
  const a = folderOf(e.from);
  const b = folderOf(e.to);
  if (a === b) continue;
  if (!graph.has(a)) graph.set(a, new Set());
  graph.get(a)?.add(b);
}
/** @type {Map<string, { index: number; low: number }>} */
const marks = new Map();
/** @type {string[]} */
const stack = [];
/** @type {string[][]} */
const cycles = [];
/** @param {string} v */
function visit(v) {
  const mark = { index: marks.size, low: marks.size };
  marks.set(v, mark);
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    const seen = marks.get(w);
    if (!seen) {
      visit(w);
      mark.low = Math.min(mark.low, marks.get(w)?.low ?? mark.low);
    } else if (stack.includes(w)) mark.low = Math.min(mark.low, seen.index);
  }
  if (mark.low !== mark.index) return;
  /** @type {string[]} */
  const component = [];
  for (;;) {
    const w = /** @type {string} */ (stack.pop());
    component.push(w);
    if (w === v) break;
  }
  if (component.length > 1) cycles.push(component.sort());
}
for (const v of [...graph.keys()].sort()) if (!marks.has(v)) visit(v);
// Each component is reported by its shortest cycles (one through each folder, duplicates dropped),
// every import of each step listed: removing the imports of one step breaks that cycle.
/** The shortest path of folders from `start` back to it, inside `component`. @param {string} start @param {string[]} component */
function shortestCycle(start, component) {
  /** @type {Map<string, string>} */
  const parent = new Map();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = /** @type {string} */ (queue[i]);
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!component.includes(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = parent.get(v); p !== undefined; p = parent.get(p)) path.unshift(p);
        return path;
      }
      if (!parent.has(w) && w !== start) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
for (const component of cycles) {
  const reported = new Set();
  for (const start of component) {
    const cycle = shortestCycle(start, component);
    const key = [...cycle].sort().join(" ");
    if (reported.has(key)) continue;
    reported.add(key);
    problems.push(`folder cycle: ${[...cycle, start].map((f) => `src/${f}`).join(" → ")}`);
    cycle.forEach((a, i) => {
      const b = cycle[(i + 1) % cycle.length];
      for (const e of edges) if (folderOf(e.from) === a && folderOf(e.to) === b) problems.push(`  ${shown(e.from)}:${e.line} → ${shown(e.to)}`);
    });
  }
}

const ms = Math.round(performance.now() - started);
if (problems.length) {
  console.error(`check-layers: the layering rule of src/ is broken (docs/architecture.md, "Layout and the layering rule"):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-layers: ${files.length} files, ${edges.length} imports, ${new Set(files.map(folderOf)).size} folders in ${LAYERS.length} layers: no upward import, no folder cycle; ${doorImports} imports into src/api/, each through its door (${ms} ms)`);
