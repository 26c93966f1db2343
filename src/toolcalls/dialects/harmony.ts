// gpt-oss (harmony) and its relatives (Muse Glimmer, muse.ts): messages whose header names a
// channel and a recipient, `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json
// <|message|>{…}<|call|>`, read here from the header (no literal table can: the header carries
// values); the message ends at an end-of-message token, which is dropped wherever it is left over.

import { MAYBE, NO, type Candidate } from "./candidate.ts";
import { drop, jsonStart, namedJsonRegion, type Dialect } from "./dialect.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

export const harmony: Dialect = {
  name: "gpt-oss (harmony)",
  blocks: [
    // Also Phi-3's and Solar Open's end of message.
    ["<|end|>", drop],
    ["<|return|>", drop],
    ["<|eot|>", drop],
    ["<|eom|>", drop],
  ],
  innerTokens: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|call|>"],
  openers: [
    // Asked without tools too: a header may open reasoning or the answer.
    { chars: "<", where: "anywhere", order: 20, withoutTools: true, read: (buf, j, ctx) => harmonyHeader(buf, j, ctx.eof, ctx.tools) },
    // The prompt opened a harmony turn (`<|start|>assistant`); the output goes on with ` to=…`.
    { chars: "t", where: "boundary", order: 20, withoutTools: true, read: (buf, j, ctx) => harmonyHeader(buf, j, ctx.eof, ctx.tools, true) },
  ],
};

const HARMONY_ENDS = ["<|call|>", "<|end|>", "<|return|>", "<|eom|>", "<|eot|>"];

/** What opens a harmony header (`to=` only where the prompt left the header open). */
const OPENS = ["<|start|>", "<|channel|>"];
const OPENS_AT_START = [...OPENS, "to="];

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
export function harmonyHeader(buf: string, j: number, eof: boolean, tools: ToolSet | null, atStart = false): Candidate {
  for (const open of atStart ? OPENS_AT_START : OPENS) {
    // Asked at every `<` of the output: nothing is copied until a header's opening is there.
    if (!buf.startsWith(open, j)) {
      if (!eof && buf.length - j < open.length && open.startsWith(buf.slice(j))) return MAYBE;
      continue;
    }
    const head = buf.slice(j, j + 400);
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
          parse: namedJsonRegion,
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
