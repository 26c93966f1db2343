// The one repair read-json-lenient.ts makes itself, for text too long to hand to jsonrepair: raw
// control characters (a literal newline or tab) inside strings, which models writing a file's
// content into an argument leave often. One pass, linear in the text.

const ESCAPES: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };

/** `text` with every control character inside a double-quoted string escaped, or null if there was none. */
export function escapeRawControls(text: string): string | null {
  let out = "";
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!inString) {
      if (c === 34) inString = true;
    } else if (c === 92) i++;
    else if (c === 34) inString = false;
    else if (c < 32) {
      out += text.slice(from, i) + (ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, "0")}`);
      from = i + 1;
    }
  }
  return from === 0 ? null : out + text.slice(from);
}
