// Python literals, as pythonic calls and text-dialect parameters write values: either quote style,
// adjacent strings joined, True/False/None, tuples and sets as arrays, dicts, Python number syntax.
// Text cut off by max_tokens closes at the end and is marked truncated. Read into JSON nodes, so the
// rest of the engine sees one kind of value whichever syntax the model used.

import {
  jsonArray,
  jsonBoolean,
  jsonNull,
  jsonNumber,
  jsonObject,
  jsonString,
  setEntry,
  type JsonEntry,
  type JsonNode,
} from "./json-node.ts";

/** The text is not Python (thrown to unwind to the outermost reader). */
export class NotPython extends Error {}
/** The text ended inside a value: thrown to unwind to the innermost open value, which closes there. */
export class EndOfText extends Error {}

const MAX_DEPTH = 128;
const NUMBER =
  /[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)/y;

/** A cursor over Python source text; pythonic calls (dialects/pythonic.ts) read their syntax with it. */
export class PythonReader {
  pos = 0;
  truncated = false;

  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  peek(): string {
    this.skipSpace();
    return this.text[this.pos] ?? "";
  }

  /** Past the end the text was cut off: remember it and unwind to the innermost open value. */
  need(): void {
    if (this.atEnd()) {
      this.truncated = true;
      throw new EndOfText();
    }
  }

  value(depth: number): JsonNode {
    if (depth > MAX_DEPTH) throw new NotPython();
    this.skipSpace();
    this.need();
    const t = this.text;
    const c = t[this.pos]!;
    if (c === "[") return this.sequence("]", depth);
    if (c === "(") return this.sequence(")", depth);
    if (c === "{") return this.braces(depth);
    if (c === '"' || c === "'" || (/[rRuUbB]/.test(c) && /^[rRuUbB]{1,2}['"]/.test(t.slice(this.pos, this.pos + 3)))) {
      return this.strings();
    }
    const word = /(True|False|None|true|false|null)(?![A-Za-z0-9_])/y;
    word.lastIndex = this.pos;
    const w = word.exec(t);
    if (w) {
      this.pos += w[0].length;
      if (w[1] === "None" || w[1] === "null") return jsonNull();
      return jsonBoolean(w[1] === "True" || w[1] === "true");
    }
    NUMBER.lastIndex = this.pos;
    const n = NUMBER.exec(t);
    if (n && n[0] !== "+" && n[0] !== "-" && !/[A-Za-z_(]/.test(t[this.pos + n[0].length] ?? "")) {
      this.pos += n[0].length;
      return jsonNumber(toJsonNumberText(n[0]));
    }
    if ((c === "-" || c === "+") && this.pos + 1 >= t.length) this.need();
    throw new NotPython();
  }

  private sequence(close: string, depth: number): JsonNode {
    this.pos++;
    const items: JsonNode[] = [];
    try {
      for (;;) {
        this.skipSpace();
        this.need();
        if (this.text[this.pos] === close) {
          this.pos++;
          return jsonArray(items);
        }
        items.push(this.value(depth + 1));
        this.skipSpace();
        this.need();
        const c = this.text[this.pos];
        if (c === ",") this.pos++;
        else if (c !== close) throw new NotPython();
      }
    } catch (e) {
      if (e instanceof EndOfText) return jsonArray(items);
      throw e;
    }
  }

  private braces(depth: number): JsonNode {
    this.pos++;
    const entries: JsonEntry[] = [];
    const items: JsonNode[] = [];
    let isSet = false;
    try {
      for (;;) {
        this.skipSpace();
        this.need();
        if (this.text[this.pos] === "}") {
          this.pos++;
          break;
        }
        const key = this.value(depth + 1);
        this.skipSpace();
        this.need();
        if (this.text[this.pos] === ":") {
          if (isSet) throw new NotPython();
          this.pos++;
          setEntry(entries, keyText(key), this.value(depth + 1));
        } else {
          if (entries.length > 0) throw new NotPython();
          isSet = true;
          items.push(key);
        }
        this.skipSpace();
        this.need();
        const c = this.text[this.pos];
        if (c === ",") this.pos++;
        else if (c !== "}") throw new NotPython();
      }
    } catch (e) {
      if (!(e instanceof EndOfText)) throw e;
    }
    return isSet ? jsonArray(items) : jsonObject(entries);
  }

  /** One string literal, or several adjacent ones, which Python concatenates. */
  private strings(): JsonNode {
    let out = this.string();
    for (;;) {
      const save = this.pos;
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === '"' || c === "'") out += this.string();
      else {
        this.pos = save;
        return jsonString(out);
      }
    }
  }

  private string(): string {
    const t = this.text;
    let raw = false;
    while (/[rRuUbB]/.test(t[this.pos]!)) {
      if (t[this.pos] === "r" || t[this.pos] === "R") raw = true;
      this.pos++;
    }
    const q = t[this.pos]!;
    const triple = t.startsWith(q.repeat(3), this.pos);
    const delim = triple ? q.repeat(3) : q;
    this.pos += delim.length;
    let out = "";
    for (;;) {
      if (this.atEnd()) {
        this.truncated = true;
        return out;
      }
      if (t.startsWith(delim, this.pos)) {
        this.pos += delim.length;
        return out;
      }
      const c = t[this.pos]!;
      if (c === "\\" && this.pos + 1 < t.length) {
        const e = t[this.pos + 1]!;
        if (raw) {
          out += c + e;
          this.pos += 2;
          continue;
        }
        const decoded = unescape(t, this.pos + 1);
        out += decoded.text;
        this.pos = decoded.end;
        continue;
      }
      if (!triple && c === "\n") throw new NotPython();
      out += c;
      this.pos++;
    }
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  "\n": "",
};

function unescape(t: string, p: number): { text: string; end: number } {
  const e = t[p]!;
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) return { text: simple, end: p + 1 };
  const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
  if (hex) {
    const digits = t.slice(p + 1, p + 1 + hex);
    if (digits.length === hex && /^[0-9a-fA-F]+$/.test(digits)) {
      return { text: String.fromCodePoint(parseInt(digits, 16)), end: p + 1 + hex };
    }
  }
  // Python keeps an unknown escape as written, backslash included.
  return { text: "\\" + e, end: p + 1 };
}

function keyText(node: JsonNode): string {
  switch (node.kind) {
    case "string":
      return node.value;
    case "number":
      return node.text;
    case "boolean":
      return node.value ? "True" : "False";
    case "null":
      return "None";
    default:
      throw new NotPython();
  }
}

/** Python number syntax to JSON number syntax; the int/float distinction is kept. */
export function toJsonNumberText(py: string): string {
  let s = py.replace(/_/g, "");
  let sign = "";
  if (s[0] === "+" || s[0] === "-") {
    sign = s[0] === "-" ? "-" : "";
    s = s.slice(1);
  }
  if (/^0[xXoObB]/.test(s)) return sign + String(parseInt(s.slice(2), { x: 16, o: 8, b: 2 }[s[1]!.toLowerCase() as "x" | "o" | "b"]));
  if (s.startsWith(".")) s = "0" + s;
  s = s.replace(/\.(?=[eE]|$)/, ".0");
  s = s.replace(/^0+(?=\d)/, "");
  return sign + s;
}

/** Reads one Python literal (a value of a text-dialect parameter); null if the text is not one. */
export function parsePythonLiteral(input: string): JsonNode | null {
  const r = new PythonReader(input.trim());
  try {
    const node = r.value(0);
    r.skipSpace();
    return r.atEnd() && !r.truncated ? node : null;
  } catch {
    return null;
  }
}
