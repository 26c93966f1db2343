// A client's regular expressions (JSON Schema `pattern`, `patternProperties`) run on a linear-time
// engine (linear-regex.ts), never on V8's backtracking RegExp: `^(a+)+$` against a model's
// `aaaa…a!` would take hours there. JSON Schema patterns are ECMA-262 regexes; one that cannot run
// in linear time (lookaround, backreferences, a counted repetition too large) is unchecked: not
// validated, and no problem is raised for it.

import { compileLinear } from "./linear-regex.ts";

/** Longest client pattern that is checked; a longer one is unchecked. */
export const MAX_CLIENT_PATTERN_LENGTH = 1000;
/**
 * Most positions a pattern's counted repetitions may add once unrolled (`[a-z]{1,64}` adds 63,
 * `(?:x{30}){30}` adds 899): the engine compiles every copy, and matching costs the text's length times
 * the positions. A pattern that adds more is unchecked.
 */
export const MAX_CLIENT_PATTERN_GROWTH = 256;
/** Most distinct patterns checked per schema; the rest are unchecked. */
export const MAX_CLIENT_PATTERNS_PER_SCHEMA = 256;

/** A compiled client pattern: `test` is RegExp.prototype.test's answer, in linear time. */
export interface ClientPattern {
  test(text: string): boolean;
}

/**
 * How many positions `source`'s counted repetitions add once unrolled, roughly: a group counts its
 * contents, `x{n,m}` adds m − 1 copies of x. Stops counting past `limit`.
 */
export function repetitionGrowth(source: string, limit = MAX_CLIENT_PATTERN_GROWTH): number {
  // Per open group: its unrolled size so far and the size of its last atom.
  const frames: Array<{ size: number; last: number }> = [{ size: 0, last: 0 }];
  const top = () => frames[frames.length - 1]!;
  let growth = 0;
  const atom = (n: number) => {
    top().size += n;
    top().last = n;
  };
  for (let i = 0; i < source.length && growth <= limit; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const e = source[++i];
      // `\u{…}` and `\p{…}` are one character; their braces count nothing.
      if ((e === "u" || e === "p" || e === "P") && source[i + 1] === "{") i = Math.max(i, source.indexOf("}", i));
      atom(1);
    } else if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
      atom(1);
    } else if (c === "(") frames.push({ size: 0, last: 0 });
    else if (c === ")") atom(frames.length > 1 ? frames.pop()!.size : 0);
    else if (c === "{") {
      const m = /^\{(\d{1,6})(?:,(\d{0,6}))?\}/.exec(source.slice(i, i + 16));
      if (!m) {
        atom(1);
        continue;
      }
      const count = Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0, 1);
      const added = top().last * (count - 1);
      growth += added;
      top().size += added;
      top().last *= count;
      i += m[0].length - 1;
    } else if (c !== "*" && c !== "+" && c !== "?" && c !== "|" && c !== "^" && c !== "$") atom(1);
  }
  return growth;
}

/** `source` compiled for the linear-time engine, or null when it is unchecked. */
export function compileClientPattern(source: string): ClientPattern | null {
  if (source.length > MAX_CLIENT_PATTERN_LENGTH || repetitionGrowth(source) > MAX_CLIENT_PATTERN_GROWTH) return null;
  try {
    // Parsed, never run: a pattern ECMA-262 refuses means nothing JSON Schema defines.
    new RegExp(source, "u");
  } catch {
    return null;
  }
  return compileLinear(source);
}

const BY_SCHEMA = new WeakMap<object, Map<string, ClientPattern | null>>();

/**
 * Compiled patterns shared by this isolate's requests, least recently used out first. A client sends
 * the same tools every turn, and compiling costs more than a short match: compiled once, a turn's patterns cost their matches only. A compiled pattern holds
 * no match state, so sharing one across requests is safe.
 */
const COMPILED = new Map<string, ClientPattern | null>();
export const MAX_COMPILED_PATTERNS = 512;

function compiledOnce(source: string): ClientPattern | null {
  const hit = COMPILED.get(source);
  if (hit !== undefined || COMPILED.has(source)) {
    COMPILED.delete(source);
    COMPILED.set(source, hit ?? null);
    return hit ?? null;
  }
  const compiled = compileClientPattern(source);
  if (COMPILED.size >= MAX_COMPILED_PATTERNS) COMPILED.delete(COMPILED.keys().next().value!);
  COMPILED.set(source, compiled);
  return compiled;
}

/**
 * `source` compiled once per schema (`root`, the object the tool's parameters were prepared as),
 * or null when it is unchecked. The cache lives as long as the schema does.
 */
export function clientPattern(root: object, source: string): ClientPattern | null {
  let cache = BY_SCHEMA.get(root);
  if (!cache) BY_SCHEMA.set(root, (cache = new Map()));
  const hit = cache.get(source);
  if (hit !== undefined || cache.has(source)) return hit ?? null;
  if (cache.size >= MAX_CLIENT_PATTERNS_PER_SCHEMA) return null;
  const compiled = compiledOnce(source);
  cache.set(source, compiled);
  return compiled;
}
