// Openings whose marker carries a value: `<function=NAME>`, `<function name="NAME">`,
// `<invoke name="NAME">`, and harmony headers with their channel and recipient.

import { MAYBE, NO, type Candidate } from "./candidate.ts";
import { jsonStart } from "./marker-table.ts";
import type { ToolSet } from "./tool-set.ts";

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

const HARMONY_ENDS = ["<|call|>", "<|end|>", "<|return|>", "<|eom|>", "<|eot|>"];

/**
 * Harmony (gpt-oss) and its relatives (muse-glimmer): a message header
 * `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>`, the
 * recipient in the role part or after the channel. When the prompt already opened the turn
 * (`<|start|>assistant`), the output starts with the rest of the header: ` to=NAME…<|message|>`
 * or `<|channel|>…` (`atStart`).
 * - to a declared function: a call (its JSON body), or just the header when the body is a
 *   dialect of its own (`<atem:function_calls>…`);
 * - to a recipient that is not a declared function (`container.exec`, `python`): a message to a
 *   tool Switchyard does not serve, dropped with its body;
 * - `to=user` is the answer and `to=self` reasoning, read as they are (no calls inside);
 * - otherwise the channel decides: `analysis` is reasoning, `final` and `commentary` content.
 */
export function harmony(buf: string, j: number, eof: boolean, tools: ToolSet | null, atStart = false): Candidate {
  const head = buf.slice(j, j + 400);
  const opens = atStart ? ["<|start|>", "<|channel|>", "to="] : ["<|start|>", "<|channel|>"];
  for (const open of opens) {
    if (!head.startsWith(open)) {
      if (!eof && head.length < open.length && open.startsWith(head)) return MAYBE;
      continue;
    }
    const msg = head.indexOf("<|message|>");
    if (msg < 0) return !eof && head.length < 400 && (open !== "to=" || /^to=[^\s<]*\s*(?:<(?:\|[\s\S]*)?)?$/.test(head)) ? MAYBE : NO;
    const header = head.slice(0, msg);
    if (open === "to=" && !/<\|(?:channel|constrain)\|>|^to=[^\s<]+\s*$/.test(header)) return NO;
    const length = msg + "<|message|>".length;
    const recipients = [...header.matchAll(/\bto=([^\s<]+)/g)].map((m) => m[1]!);
    const to = recipients.filter((r) => r !== "assistant").pop();
    const channel = [...header.matchAll(/<\|channel\|>\s*(\w+)/g)].map((m) => m[1]!).pop();
    if (to === "user" || to === "all") return { kind: "block", length, into: "content", close: HARMONY_ENDS, ends: ["<|start|>"] };
    if (to === "self") return { kind: "reasoning", length, close: HARMONY_ENDS, ends: ["<|start|>"] };
    if (to !== undefined) {
      const name = to.replace(/^functions\./, "");
      if (!tools?.enabled || !tools.resolve(name, false)) return { kind: "block", length, into: "none", close: HARMONY_ENDS, ends: ["<|start|>"] };
      const k = head.slice(length).search(/\S/);
      if (k < 0 && !eof && head.length < 400) return MAYBE;
      if (k >= 0 && head[length + k] === "<") return { kind: "drop", length };
      return {
        kind: "region",
        length,
        spec: {
          dialect: "named-json",
          close: ["<|call|>", "<|end|>", "<|return|>"],
          reopen: ["<|start|>"],
          valueStart: jsonStart,
          name,
          optionalClose: true,
        },
      };
    }
    if (channel === "analysis") return { kind: "reasoning", length, close: ["<|end|>"], ends: ["<|start|>"] };
    return { kind: "drop", length };
  }
  return NO;
}
