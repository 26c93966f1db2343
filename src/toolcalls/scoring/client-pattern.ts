// A client's regular expressions (JSON Schema `pattern`, `patternProperties`) run on RE2's
// linear-time engine (re2js), never on V8's backtracking RegExp: `^(a+)+$` against a model's
// `aaaa…a!` would take hours there. JSON Schema patterns are ECMA-262 regexes; one RE2 cannot run
// the same way (lookaround, backreferences, a counted repetition too large) is unchecked: not
// validated, and no problem is raised for it.

import { RE2JS } from "re2js";

/** Longest client pattern that is checked; a longer one is unchecked. */
export const MAX_CLIENT_PATTERN_LENGTH = 1000;
/**
 * Most positions a pattern's counted repetitions may add once unrolled (`[a-z]{1,64}` adds 63,
 * `(?:x{30}){30}` adds 899): RE2 compiles every copy, and matching costs the text's length times
 * the positions. A pattern that adds more is unchecked.
 */
export const MAX_CLIENT_PATTERN_GROWTH = 256;
/** Most distinct patterns checked per schema; the rest are unchecked. */
export const MAX_CLIENT_PATTERNS_PER_SCHEMA = 256;

/** A compiled client pattern: `test` is RegExp.prototype.test's answer, in linear time. */
export interface ClientPattern {
  test(text: string): boolean;
}

/** What ECMA-262 calls white space and line terminators (`\s`); RE2's `\s` is ASCII only. */
const ECMA_SPACE = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
/** ECMA-262's `.` (no `s` flag): anything but a line terminator. */
const ECMA_DOT = "[^\\n\\r\\x{2028}\\x{2029}]";
const ANY = "\\x{0}-\\x{10FFFF}";

const isHex = (s: string) => /^[0-9a-fA-F]+$/.test(s);

/**
 * An ECMA-262 pattern (as with the `u` flag) rewritten in RE2's syntax with the same meaning, or
 * null when RE2 has no equivalent. Lookaround and backreferences are left for RE2 to refuse.
 */
export function toRe2Syntax(source: string): string | null {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const escape = translateEscape(source, i + 1, inClass);
      if (!escape) return null;
      out += escape.text;
      i = escape.last;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      // ECMA reads `[` in a class as itself; RE2 would read `[:alpha:]`.
      out += c === "[" ? "\\[" : c;
      continue;
    }
    if (c === "[") {
      const negated = source[i + 1] === "^";
      const first = i + (negated ? 2 : 1);
      // `[]` matches nothing and `[^]` anything in ECMA; RE2 reads `]` there as a member.
      if (source[first] === "]") {
        out += negated ? `[${ANY}]` : `[^${ANY}]`;
        i = first;
        continue;
      }
      inClass = true;
      out += negated ? "[^" : "[";
      i = first - 1;
      continue;
    }
    out += c === "." ? ECMA_DOT : c;
  }
  return inClass ? null : out;
}

/**
 * The escape whose letter is at `at` (just after its backslash) in RE2's syntax, and the index of its
 * last character; null when RE2 has no equivalent.
 */
function translateEscape(source: string, at: number, inClass: boolean): { text: string; last: number } | null {
  const e = source[at];
  if (e === undefined) return null;
  switch (e) {
    case "s":
      return { text: inClass ? ECMA_SPACE : `[${ECMA_SPACE}]`, last: at };
    case "S":
      return inClass ? null : { text: `[^${ECMA_SPACE}]`, last: at };
    case "b":
      return { text: inClass ? "\\x{8}" : "\\b", last: at };
    case "u": {
      const read = readUnicodeEscape(source, at);
      return read && { text: `\\x{${read.cp.toString(16)}}`, last: read.last };
    }
    case "0":
      return /[0-9]/.test(source[at + 1] ?? "") ? null : { text: "\\x{0}", last: at };
    case "c":
    case "k":
      return null;
    default:
      // \d \D \w \W \B \t \n \r \f \v \xHH \p{…} mean the same in RE2; an escaped punctuation
      // character is itself in both; anything else (\1, \a) is RE2's to refuse or ECMA's.
      return { text: "\\" + e, last: at };
  }
}

/** `\u{…}` or `\uXXXX` (a surrogate pair written as two escapes is one code point), its `u` at `at`; null when not a code point. */
function readUnicodeEscape(source: string, at: number): { cp: number; last: number } | null {
  let i = at;
  let cp: number;
  if (source[i + 1] === "{") {
    const close = source.indexOf("}", i + 2);
    const hex = close < 0 ? "" : source.slice(i + 2, close);
    if (!isHex(hex) || hex.length > 6) return null;
    cp = parseInt(hex, 16);
    i = close;
  } else {
    const hex = source.slice(i + 1, i + 5);
    if (hex.length !== 4 || !isHex(hex)) return null;
    cp = parseInt(hex, 16);
    i += 4;
    // A surrogate pair written as two escapes is one code point.
    const low = source.slice(i + 1, i + 7);
    if (cp >= 0xd800 && cp <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low)) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(low.slice(2), 16) - 0xdc00);
      i += 6;
    }
  }
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return null;
  return { cp, last: i };
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

/** `source` compiled for RE2, or null when it is unchecked. */
export function compileClientPattern(source: string): ClientPattern | null {
  if (source.length > MAX_CLIENT_PATTERN_LENGTH || repetitionGrowth(source) > MAX_CLIENT_PATTERN_GROWTH) return null;
  try {
    // Parsed, never run: a pattern ECMA-262 refuses means nothing JSON Schema defines.
    new RegExp(source, "u");
  } catch {
    return null;
  }
  const re2 = toRe2Syntax(source);
  if (re2 === null) return null;
  try {
    return RE2JS.compile(re2);
  } catch {
    return null;
  }
}

const BY_SCHEMA = new WeakMap<object, Map<string, ClientPattern | null>>();

/**
 * Compiled patterns shared by this isolate's requests, least recently used out first. A client sends
 * the same tools every turn, and compiling for RE2 costs far more than the match (about 2 ms for a
 * nested group): compiled once, a turn's patterns cost their matches only. A compiled pattern holds
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
