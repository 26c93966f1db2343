// A regular expression run in time linear in the text (a Pike VM over a Thompson NFA), for client
// patterns matched against model-written text: V8's backtracking RegExp takes hours on `^(a+)+$`
// against `aaaa…a!`; this takes the text's length times the program's size. Replaces re2js (45 KiB of
// the Worker's gzipped bundle, most of it Unicode tables): each atom that reads one character (a
// class, an escape, `.`) is tested by V8's own RegExp on that one character, so Unicode properties,
// `\s` and class syntax mean exactly what ECMA-262 says, and no backtracking is possible on one
// character. Lookaround and backreferences have no linear-time meaning: such a pattern is refused.
// Long because the parser, the compiler to the program and the machine that runs it are one engine
// with one contract (RegExp.prototype.test's answer, in linear time); split, none is usable alone.

/** One step of the program. `next`/`alt` are indexes into the program. */
type Op =
  | { op: "char"; test: (ch: string) => boolean; next: number }
  | { op: "split"; next: number; alt: number }
  | { op: "jmp"; next: number }
  | { op: "assert"; kind: "^" | "$" | "b" | "B"; next: number }
  | { op: "match" };

/** The parse: a tree whose leaves read one character or assert a position. */
type Node =
  | { t: "char"; test: (ch: string) => boolean }
  | { t: "assert"; kind: "^" | "$" | "b" | "B" }
  | { t: "seq"; items: Node[] }
  | { t: "alt"; items: Node[] }
  | { t: "repeat"; item: Node; min: number; max: number };

/** Thrown for what the engine cannot run in linear time (lookaround, backreferences, modifiers). */
class Unsupported extends Error {}

/** A compiled pattern: `test` is RegExp.prototype.test's answer for the same source with the `u` flag. */
export interface LinearRegex {
  test(text: string): boolean;
}

/**
 * `source` (ECMA-262 syntax, as with the `u` flag, which the caller has checked it parses with)
 * compiled, or null when it needs lookaround, a backreference or a group modifier.
 * `maxProgram` bounds the program (counted repetitions unrolled): null past it.
 */
export function compileLinear(source: string, maxProgram = 20_000): LinearRegex | null {
  let tree: Node;
  try {
    const parser = new Parser(source);
    tree = parser.alternation();
    if (parser.i !== source.length) return null;
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
  const prog: Op[] = [];
  if (!emit(tree, prog, maxProgram)) return null;
  prog.push({ op: "match" });
  const machine = machineOf(prog);
  return { test: (text) => run(machine, text) };
}

/**
 * One character tested by V8's RegExp: `atom` is a class, an escape or `.`, never a quantifier. An
 * ASCII character's answer is kept (most text is ASCII, and a repeated class is tested once per
 * thread per character), so the RegExp runs at most once per ASCII character and atom.
 */
function nativeAtom(atom: string): (ch: string) => boolean {
  const re = new RegExp(`^(?:${atom})$`, "u");
  const ascii = new Int8Array(128); // 0: not asked yet, 1: no, 2: yes
  return (ch) => {
    const c = ch.charCodeAt(0);
    if (c >= 128 || ch.length !== 1) return re.test(ch);
    const known = ascii[c]!;
    if (known !== 0) return known === 2;
    const yes = re.test(ch);
    ascii[c] = yes ? 2 : 1;
    return yes;
  };
}

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  alternation(): Node {
    const items = [this.sequence()];
    while (this.s[this.i] === "|") {
      this.i++;
      items.push(this.sequence());
    }
    return items.length === 1 ? items[0]! : { t: "alt", items };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") items.push(this.quantified(this.atom()));
    return { t: "seq", items };
  }

  private quantified(item: Node): Node {
    const c = this.s[this.i];
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i, this.i + 32));
      if (!m) throw new Unsupported();
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
    } else return item;
    this.i++;
    // Lazy or greedy says which match is found, not whether one is: `test` ignores it.
    if (this.s[this.i] === "?") this.i++;
    return this.quantified({ t: "repeat", item, min, max });
  }

  private atom(): Node {
    const s = this.s;
    const c = s[this.i]!;
    if (c === "(") {
      this.i++;
      if (s[this.i] === "?") {
        const head = s.slice(this.i, this.i + 3);
        if (head.startsWith("?:")) this.i += 2;
        else if (head.startsWith("?<") && head !== "?<=" && head !== "?<!") this.i = s.indexOf(">", this.i) + 1;
        else throw new Unsupported(); // lookaround, modifiers
      }
      const inner = this.alternation();
      if (s[this.i] !== ")") throw new Unsupported();
      this.i++;
      return inner;
    }
    if (c === "^" || c === "$") {
      this.i++;
      return { t: "assert", kind: c };
    }
    if (c === "[") {
      const start = this.i;
      for (this.i++; this.i < s.length && s[this.i] !== "]"; this.i++) if (s[this.i] === "\\") this.i++;
      this.i++;
      return { t: "char", test: nativeAtom(s.slice(start, this.i)) };
    }
    if (c === ".") {
      this.i++;
      return { t: "char", test: nativeAtom(".") };
    }
    if (c === "\\") return this.escape();
    const cp = s.codePointAt(this.i)!;
    const lit = String.fromCodePoint(cp);
    this.i += lit.length;
    return { t: "char", test: (ch) => ch === lit };
  }

  private escape(): Node {
    const s = this.s;
    const start = this.i;
    const e = s[this.i + 1];
    if (e === "b" || e === "B") {
      this.i += 2;
      return { t: "assert", kind: e };
    }
    if (e === undefined || e === "k" || (e >= "1" && e <= "9")) throw new Unsupported(); // backreferences
    let end = this.i + 2;
    if ((e === "p" || e === "P" || e === "u") && s[end] === "{") end = s.indexOf("}", end) + 1;
    else if (e === "u") {
      end += 4;
      // A surrogate pair written as two escapes is one character.
      if (/^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(s.slice(end, end + 6)) && /^[dD][89abAB]/.test(s.slice(start + 2, start + 4))) end += 6;
    } else if (e === "x") end += 2;
    else if (e === "c") end += 1;
    if (end <= start + 1) throw new Unsupported();
    this.i = end;
    return { t: "char", test: nativeAtom(s.slice(start, end)) };
  }
}

/** Appends `node`'s code to `prog`; false once the program would pass `max` steps. */
function emit(node: Node, prog: Op[], max: number): boolean {
  if (prog.length > max) return false;
  switch (node.t) {
    case "char":
      prog.push({ op: "char", test: node.test, next: prog.length + 1 });
      return true;
    case "assert":
      prog.push({ op: "assert", kind: node.kind, next: prog.length + 1 });
      return true;
    case "seq":
      return node.items.every((n) => emit(n, prog, max));
    case "alt": {
      const jumps: Array<{ op: "jmp"; next: number }> = [];
      for (let k = 0; k < node.items.length - 1; k++) {
        const split: Op = { op: "split", next: prog.length + 1, alt: 0 };
        prog.push(split);
        if (!emit(node.items[k]!, prog, max)) return false;
        const jmp = { op: "jmp" as const, next: 0 };
        jumps.push(jmp);
        prog.push(jmp);
        split.alt = prog.length;
      }
      if (!emit(node.items.at(-1)!, prog, max)) return false;
      for (const j of jumps) j.next = prog.length;
      return true;
    }
    case "repeat": {
      for (let k = 0; k < node.min; k++) if (!emit(node.item, prog, max)) return false;
      if (node.max === Infinity) {
        // L: split body, out; body; jmp L
        const split: Op = { op: "split", next: prog.length + 1, alt: 0 };
        const loop = prog.length;
        prog.push(split);
        if (!emit(node.item, prog, max)) return false;
        prog.push({ op: "jmp", next: loop });
        split.alt = prog.length;
        return true;
      }
      // Each optional copy: split body, out (all outs to the end).
      const splits: Array<{ op: "split"; next: number; alt: number }> = [];
      for (let k = node.min; k < node.max; k++) {
        const split = { op: "split" as const, next: prog.length + 1, alt: 0 };
        splits.push(split);
        prog.push(split);
        if (!emit(node.item, prog, max)) return false;
      }
      for (const sp of splits) sp.alt = prog.length;
      return true;
    }
  }
}

const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;
const ASSERTS = { "^": 0, $: 1, b: 2, B: 3 } as const;

/** The program flattened into typed arrays: the matching loop reads numbers, not objects. */
interface Machine {
  kind: Uint8Array;
  next: Int32Array;
  /** A split's second branch; an assertion's kind (ASSERTS). */
  alt: Int32Array;
  tests: Array<((ch: string) => boolean) | undefined>;
}

function machineOf(prog: Op[]): Machine {
  const m: Machine = { kind: new Uint8Array(prog.length), next: new Int32Array(prog.length), alt: new Int32Array(prog.length), tests: new Array(prog.length) };
  prog.forEach((op, i) => {
    switch (op.op) {
      case "char":
        m.kind[i] = CHAR;
        m.next[i] = op.next;
        m.tests[i] = op.test;
        break;
      case "split":
        m.kind[i] = SPLIT;
        m.next[i] = op.next;
        m.alt[i] = op.alt;
        break;
      case "jmp":
        m.kind[i] = JMP;
        m.next[i] = op.next;
        break;
      case "assert":
        m.kind[i] = ASSERT;
        m.next[i] = op.next;
        m.alt[i] = ASSERTS[op.kind];
        break;
      case "match":
        m.kind[i] = MATCH;
        break;
    }
  });
  return m;
}

/**
 * Whether the program matches somewhere in `text`: every thread advanced one character (code
 * point, as with the `u` flag; a lone surrogate is one) at a time, each program step at most once per
 * position, so the time is the text's length times the program's size.
 */
function run(m: Machine, text: string): boolean {
  const size = m.kind.length;
  const seen = new Int32Array(size).fill(-1);
  let current = new Int32Array(size);
  let next = new Int32Array(size);
  let nCurrent = 0;
  let nNext = 0;
  const stack = new Int32Array(size + 1);
  let prev: string | undefined;
  let ch: string | undefined;
  /** Adds `pc` and every step reachable from it without reading, at position `pos`, to `list`; true on a match. */
  const add = (list: Int32Array, count: number, pc: number, pos: number): number => {
    let sp = 0;
    stack[sp++] = pc;
    while (sp > 0) {
      const p = stack[--sp]!;
      if (seen[p] === pos) continue;
      seen[p] = pos;
      switch (m.kind[p]) {
        case MATCH:
          return -1;
        case JMP:
          stack[sp++] = m.next[p]!;
          break;
        case SPLIT:
          stack[sp++] = m.alt[p]!;
          stack[sp++] = m.next[p]!;
          break;
        case ASSERT:
          if (holds(m.alt[p]!, prev, ch, pos, text.length)) stack[sp++] = m.next[p]!;
          break;
        default:
          list[count++] = p;
      }
    }
    return count;
  };
  /** The character (one code point) at code unit `i`, or undefined at the end. */
  const charAt = (i: number) => (i >= text.length ? undefined : text.codePointAt(i)! > 0xffff ? text.slice(i, i + 2) : text[i]);
  ch = charAt(0);
  for (let i = 0; ; ) {
    // Unanchored: a new thread starts at every position (`test` needs no preference among them).
    nCurrent = add(current, nCurrent, 0, i);
    if (nCurrent < 0) return true;
    const read = ch;
    if (read === undefined) return false;
    i += read.length;
    // The threads that read `read` continue at i, between it and the character after it.
    prev = read;
    ch = charAt(i);
    nNext = 0;
    for (let k = 0; k < nCurrent; k++) {
      const p = current[k]!;
      if (m.tests[p]!(read)) {
        nNext = add(next, nNext, m.next[p]!, i);
        if (nNext < 0) return true;
      }
    }
    [current, next] = [next, current];
    nCurrent = nNext;
  }
}

const isWordChar = (ch: string | undefined) => ch !== undefined && ch.length === 1 && /[A-Za-z0-9_]/.test(ch);

/** Whether the assertion `kind` (ASSERTS) holds between `prev` and `ch`, at code unit `at` of a text of `length` (no `m` flag: `^`/`$` are the text's ends). */
function holds(kind: number, prev: string | undefined, ch: string | undefined, at: number, length: number): boolean {
  if (kind === 0) return at === 0;
  if (kind === 1) return at === length;
  const boundary = isWordChar(prev) !== isWordChar(ch);
  return kind === 2 ? boundary : !boundary;
}
