// A llama.cpp grammar constrains only the tokens a request generates, never a prefill: a continuation
// sent with the client's grammar would start the grammar over after the text already written. The
// grammar can be carried only when what remains of it after that text is known. For a grammar whose
// only sentence is one literal, it is the rest of the literal; any other grammar is not carried.

/** GBNF escapes inside a double-quoted literal (llama.cpp grammar-parser.cpp `parse_char`). */
const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", '"': '"', "[": "[", "]": "]" };

/** The one sentence of `root ::= "…"` (the whole grammar one rule, one literal), else null. */
export function literalOf(grammar: string): string | null {
  const m = /^\s*root\s*::=\s*"((?:[^"\\]|\\.)*)"\s*$/s.exec(grammar);
  if (!m) return null;
  const body = m[1]!;
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i]!;
    const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hex) {
      const digits = body.slice(i + 1, i + 1 + hex);
      if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex) return null;
      out += String.fromCodePoint(parseInt(digits, 16));
      i += hex;
    } else if (e in ESCAPES) out += ESCAPES[e];
    else return null;
  }
  return out;
}

/** `root ::= "…"` for a literal, escaped as GBNF reads it. */
export function literalGrammar(text: string): string {
  let body = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") body += `\\${ch}`;
    else if (ch === "\n") body += "\\n";
    else if (ch === "\r") body += "\\r";
    else if (ch === "\t") body += "\\t";
    else if (cp < 0x20 || cp === 0x7f) body += `\\x${cp.toString(16).padStart(2, "0")}`;
    else body += ch;
  }
  return `root ::= "${body}"`;
}

/**
 * The grammar for what follows `written` under `grammar`: the rest of a one-literal grammar when the
 * literal starts with `written`; null when the grammar cannot be carried (any other grammar, or text
 * that left the literal).
 */
export function grammarAfter(grammar: string, written: string): string | null {
  const literal = literalOf(grammar);
  if (literal === null || !literal.startsWith(written)) return null;
  return literalGrammar(literal.slice(written.length));
}
