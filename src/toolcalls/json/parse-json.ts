// Strict JSON (RFC 8259) reader that keeps spans and number text. Anything it rejects goes to
// jsonrepair (read-json-lenient.ts); this file never repairs.

import { setEntry, type JsonEntry, type JsonNode } from "./json-node.ts";

/** The deepest nesting the reader follows (a value nested deeper is refused). */
export const MAX_JSON_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Reader {
  readonly text: string;
  pos: number;

  constructor(text: string, pos: number) {
    this.text = text;
    this.pos = pos;
  }

  skipSpace(): void {
    const t = this.text;
    let p = this.pos;
    while (p < t.length) {
      const c = t.charCodeAt(p);
      if (c === 32 || c === 10 || c === 13 || c === 9) p++;
      else break;
    }
    this.pos = p;
  }

  value(depth: number): JsonNode | null {
    if (depth > MAX_JSON_DEPTH) return null;
    this.skipSpace();
    const t = this.text;
    const start = this.pos;
    const c = t[start];
    switch (c) {
      case "{":
        return this.object(depth);
      case "[":
        return this.array(depth);
      case '"': {
        const value = this.string();
        return value === null ? null : { kind: "string", value, start, end: this.pos };
      }
      case "t":
        return this.literal("true", { kind: "boolean", value: true, start, end: start + 4 });
      case "f":
        return this.literal("false", { kind: "boolean", value: false, start, end: start + 5 });
      case "n":
        return this.literal("null", { kind: "null", start, end: start + 4 });
      default: {
        NUMBER.lastIndex = start;
        const m = NUMBER.exec(t);
        if (!m) return null;
        this.pos = start + m[0].length;
        return { kind: "number", text: m[0], value: Number(m[0]), start, end: this.pos };
      }
    }
  }

  private literal(word: string, node: JsonNode): JsonNode | null {
    if (!this.text.startsWith(word, this.pos)) return null;
    this.pos += word.length;
    return node;
  }

  private string(): string | null {
    const t = this.text;
    const start = this.pos;
    let p = start + 1;
    let escaped = false;
    for (;;) {
      const q = t.indexOf('"', p);
      if (q < 0) return null;
      // Count the backslashes right before the quote: an odd number escapes it.
      let k = q - 1;
      while (k > start && t.charCodeAt(k) === 92) k--;
      if ((q - 1 - k) % 2 === 1) {
        escaped = true;
        p = q + 1;
        continue;
      }
      const raw = t.slice(start + 1, q);
      this.pos = q + 1;
      // Raw control characters are invalid JSON; let the lenient reader deal with them.
      for (let i = 0; i < raw.length; i++) if (raw.charCodeAt(i) < 32) return null;
      if (!escaped && raw.indexOf("\\") < 0) return raw;
      try {
        return JSON.parse(t.slice(start, q + 1)) as string;
      } catch {
        return null;
      }
    }
  }

  private object(depth: number): JsonNode | null {
    const start = this.pos;
    this.pos++;
    const entries: JsonEntry[] = [];
    this.skipSpace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return { kind: "object", entries, start, end: this.pos };
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') return null;
      const key = this.string();
      if (key === null) return null;
      this.skipSpace();
      if (this.text[this.pos] !== ":") return null;
      this.pos++;
      const value = this.value(depth + 1);
      if (!value) return null;
      setEntry(entries, key, value);
      this.skipSpace();
      const c = this.text[this.pos];
      this.pos++;
      if (c === "}") return { kind: "object", entries, start, end: this.pos };
      if (c !== ",") return null;
    }
  }

  private array(depth: number): JsonNode | null {
    const start = this.pos;
    this.pos++;
    const items: JsonNode[] = [];
    this.skipSpace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return { kind: "array", items, start, end: this.pos };
    }
    for (;;) {
      const value = this.value(depth + 1);
      if (!value) return null;
      items.push(value);
      this.skipSpace();
      const c = this.text[this.pos];
      this.pos++;
      if (c === "]") return { kind: "array", items, start, end: this.pos };
      if (c !== ",") return null;
    }
  }
}

/** Reads one JSON value starting at `start` (leading whitespace allowed); `end` is just after it. */
export function parseJsonValue(text: string, start = 0): { node: JsonNode; end: number } | null {
  const r = new Reader(text, start);
  const node = r.value(0);
  return node ? { node, end: r.pos } : null;
}

/** Reads a whole document: one value with only whitespace around it. */
export function parseJson(text: string): JsonNode | null {
  const r = new Reader(text, 0);
  const node = r.value(0);
  if (!node) return null;
  r.skipSpace();
  return r.pos === text.length ? node : null;
}
