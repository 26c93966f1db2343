// Openings whose marker carries a value: `<function=NAME>`, `<function name="NAME">`,
// `<invoke name="NAME">`, and harmony headers with their channel and recipient.

import { MAYBE, NO, type Candidate } from "./candidate.ts";
import { jsonStart } from "./marker-table.ts";

/**
 * Whether `partial` (the text so far) may still grow into `<tag=NAME>` or `<tag name="NAME">`:
 * it is a prefix of the opening, or the opening followed by a name not yet closed.
 */
function couldBecomeTag(partial: string, equals: string | null, named: string): boolean {
  if (partial.length >= 160) return false;
  if (equals && (equals.startsWith(partial) || (partial.startsWith(equals) && /^[^>\n<]*$/.test(partial.slice(equals.length))))) {
    return true;
  }
  const p = partial.replace(/\s*=\s*/g, "=").replace(/\s+/g, " ");
  return named.startsWith(p) || (p.startsWith(named) && /^[^"\n]*(?:" ?)?$/.test(p.slice(named.length)));
}

/**
 * Whether the text at `j` agrees with `open` as far as it goes: anything else (`<b>`, `<|im_end|>`)
 * can never become that opening, and is turned down before any slicing or matching.
 */
function agreesWith(buf: string, j: number, open: string): boolean {
  const n = Math.min(open.length, buf.length - j);
  for (let i = 1; i < n; i++) if (buf.charCodeAt(j + i) !== open.charCodeAt(i)) return false;
  return true;
}

/** `<function=NAME>`, `<function name="NAME">` (Functionary v3.1, Hermes; body JSON or XML). */
export function functionTag(buf: string, j: number, eof: boolean): Candidate {
  if (!agreesWith(buf, j, "<function")) return NO;
  const m = /^<function(?:=([^>\n<]{1,128})>|\s+name\s*=\s*"([^"\n]{1,128})"\s*>)/.exec(buf.slice(j, j + 160));
  if (m) {
    const name = (m[1] ?? m[2])!.trim();
    return {
      kind: "region",
      length: m[0].length,
      spec: { dialect: "function-tag", close: ["</function>"], reopen: ["<function=", "<function "], valueStart: jsonStart, name },
    };
  }
  if (eof) return NO;
  return couldBecomeTag(buf.slice(j, j + 160), "<function=", "<function name=\"") ? MAYBE : NO;
}

/** MiniMax without its outer tag: <invoke name="NAME">…</invoke>. */
export function invokeTag(buf: string, j: number, eof: boolean): Candidate {
  if (!agreesWith(buf, j, "<invoke")) return NO;
  const head = buf.slice(j, j + 160);
  if (/^<invoke\s+name\s*=\s*"[^"\n]{1,128}"\s*>/.test(head)) {
    return { kind: "region", length: 0, spec: { dialect: "minimax", close: ["</invoke>"], reopen: [], closeInBody: true } };
  }
  if (!eof && couldBecomeTag(head, null, "<invoke name=\"")) return MAYBE;
  return NO;
}

/** Harmony (gpt-oss): `<|start|>assistant<|channel|>commentary to=functions.NAME …<|message|>`. */
export function harmony(buf: string, j: number, eof: boolean, callsEnabled: boolean): Candidate {
  if (!agreesWith(buf, j, "<|")) return NO;
  const head = buf.slice(j, j + 400);
  for (const open of ["<|start|>", "<|channel|>"]) {
    if (!head.startsWith(open)) {
      if (!eof && head.length < open.length && open.startsWith(head)) return MAYBE;
      continue;
    }
    const msg = head.indexOf("<|message|>");
    if (msg < 0) return !eof && head.length < 400 ? MAYBE : NO;
    const header = head.slice(0, msg);
    const length = msg + "<|message|>".length;
    const to = /\bto=(?:functions\.)?([^\s<]+)/.exec(header);
    const channel = /<\|channel\|>\s*(\w+)/.exec(header)?.[1];
    if (to && callsEnabled) {
      return {
        kind: "region",
        length,
        spec: {
          dialect: "named-json",
          close: ["<|call|>", "<|end|>", "<|return|>"],
          reopen: ["<|start|>"],
          valueStart: jsonStart,
          name: to[1]!,
          optionalClose: true,
        },
      };
    }
    if (channel === "analysis") return { kind: "reasoning", length, close: "<|end|>" };
    return { kind: "drop", length };
  }
  return NO;
}
