// House figures: the largest files and the longest functions in src/, by the TypeScript compiler's parse.
//
// The convention: a file over 300 lines, or a file holding a function over 80 lines, says why in a
// comment that contains the words "long because" (for example `// This file is long because …`). This
// script flags every such file that does not. It is a report: it always exits 0.
// Usage: node scripts/house-figures.mjs   (or npm run house)
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOT = new URL("..", import.meta.url).pathname;
const SRC = join(ROOT, "src");
// Generated from OpenAI's and Anthropic's types by scripts/gen-wire-types.mjs; not written by hand.
const EXCLUDED = new Set(["src/api/wire/anthropic-wire.ts"]);
const FILE_LIMIT = 300;
const FUNCTION_LIMIT = 80;
const TOP = 5;

/** @param {string} dir @returns {string[]} */
function sourceFiles(dir) {
  /** @type {string[]} */
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** @param {ts.FunctionLikeDeclaration} node @param {ts.SourceFile} sf @returns {string} */
function functionName(node, sf) {
  if (node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(sf);
  return "(anonymous)";
}

/** @param {ts.Node} node @returns {node is ts.FunctionLikeDeclaration} */
function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** @type {{ rel: string; lines: number; saysWhy: boolean }[]} */
const files = [];
/** @type {{ rel: string; name: string; line: number; lines: number; saysWhy: boolean }[]} */
const functions = [];
for (const path of sourceFiles(SRC)) {
  const rel = relative(ROOT, path);
  if (EXCLUDED.has(rel)) continue;
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  const saysWhy = /long because/i.test(text);
  files.push({ rel, lines, saysWhy });
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (isFunctionLike(node) && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      functions.push({ rel, name: functionName(node, sf), line: start + 1, lines: end - start + 1, saysWhy });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

files.sort((a, b) => b.lines - a.lines);
functions.sort((a, b) => b.lines - a.lines);

console.log(`src/: ${files.length} files (excluded, generated: ${[...EXCLUDED].join(", ")})`);
console.log(`\nlargest files (lines):`);
for (const f of files.slice(0, TOP)) console.log(`  ${String(f.lines).padStart(5)}  ${f.rel}${f.saysWhy ? "  (says why)" : ""}`);
console.log(`\nlongest functions (lines, start to end of the node):`);
for (const f of functions.slice(0, TOP)) {
  console.log(`  ${String(f.lines).padStart(5)}  ${f.name}  ${f.rel}:${f.line}${f.saysWhy ? "  (file says why)" : ""}`);
}

const flagged = [
  ...files.filter((f) => f.lines > FILE_LIMIT && !f.saysWhy).map((f) => `  file ${f.rel}: ${f.lines} lines`),
  ...functions
    .filter((f) => f.lines > FUNCTION_LIMIT && !f.saysWhy)
    .map((f) => `  function ${f.name} ${f.rel}:${f.line}: ${f.lines} lines`),
];
console.log(`\nover ${FILE_LIMIT} lines (file) or ${FUNCTION_LIMIT} (function) without a "long because" comment: ${flagged.length}`);
for (const line of flagged) console.log(line);
process.exitCode = 0;
