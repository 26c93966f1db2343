// What scan/classify-at.ts asks at each character, built once from the literal tables
// (marker-table.ts) and the openers the dialects of registry.ts declare (dialect.ts, Opener): for
// each ASCII character the steps in the order of their numbers, and the characters worth asking.

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "./candidate.ts";
import type { FenceAt, Opener, OpenerWhere } from "./dialect.ts";
import { CALL_TRIE, REASONING_TRIE, STRAY_TAG_TRIE, STRAY_TOKEN_TRIE, literal } from "./marker-table.ts";
import { DIALECTS } from "./registry.ts";

/** One thing asked at a character. */
export interface Step {
  order: number;
  where: OpenerWhere;
  withoutTools: boolean;
  read: (buf: string, j: number, ctx: ScanContext, fence: FenceAt) => Candidate;
}

/** An explicit call marker's reader (Opener.call). */
export type CallRead = (buf: string, j: number, eof: boolean) => Candidate;

/** The literal tables, at the characters their markers start with and where the scanner reads them. */
const LITERAL_STEPS: Array<[string, Step]> = [
  // A reasoning block or framing, tools or not.
  ["<[", { order: 0, where: "anywhere", withoutTools: true, read: (buf, j, ctx) => literal(buf, j, ctx.eof, REASONING_TRIE) }],
  // A stray closing marker: a special token anywhere, a tag only at the boundary.
  [
    "<",
    {
      order: 10,
      where: "anywhere",
      withoutTools: false,
      read: (buf, j, ctx) => {
        const s = literal(buf, j, ctx.eof, STRAY_TOKEN_TRIE);
        if (s.kind !== "no") return s;
        return ctx.atBoundary ? literal(buf, j, ctx.eof, STRAY_TAG_TRIE) : NO;
      },
    },
  ],
  // A literal call marker (MiniMax-M3's namespace token `]<]minimax[>[` starts with `]`).
  ["<[]", { order: 30, where: "anywhere", withoutTools: false, read: (buf, j, ctx) => literal(buf, j, ctx.eof, CALL_TRIE) }],
];

/** Characters after which nothing but the literal tables, the openers starting there and fences is asked. */
const OWN_CHARS = "<[]`";

const OPENERS: readonly Opener[] = DIALECTS.flatMap((d) => d.openers ?? []);

const stepOf = (o: Opener): Step => {
  const call = o.call;
  const read = o.read ?? (call ? (buf: string, j: number, ctx: ScanContext) => call(buf, j, ctx.eof) : undefined);
  if (!read) throw new Error("an opener reads something");
  return { order: o.order, where: o.where, withoutTools: o.withoutTools === true, read };
};

const byOrder = <T extends { order: number }>(a: T, b: T): number => a.order - b.order;

const startsAt = (chars: string | null, c: string): boolean => (chars === null ? !OWN_CHARS.includes(c) : chars.includes(c));

/** The steps at each ASCII character, in order. */
const ASCII_STEPS: ReadonlyArray<readonly Step[]> = Array.from({ length: 128 }, (_, code) => {
  const c = String.fromCharCode(code);
  const steps: Array<{ order: number; step: Step }> = [
    ...LITERAL_STEPS.filter(([chars]) => chars.includes(c)).map(([, step]) => ({ order: step.order, step })),
    ...OPENERS.filter((o) => startsAt(o.chars, c)).map((o) => ({ order: o.order, step: stepOf(o) })),
  ];
  return Object.freeze(steps.sort(byOrder).map((s) => s.step));
});

/** The steps at any other character: the openers asked at every character. */
const OTHER_STEPS: readonly Step[] = Object.freeze(OPENERS.filter((o) => o.chars === null).sort(byOrder).map(stepOf));

/** What to ask at a character, by its code, in order. */
export const stepsAt = (code: number): readonly Step[] => (code < 128 ? ASCII_STEPS[code]! : OTHER_STEPS);

/** The explicit call markers' readers at a character (ASCII only), in order. */
const ASCII_CALLS: ReadonlyArray<readonly CallRead[]> = Array.from({ length: 128 }, (_, code) => {
  const c = String.fromCharCode(code);
  const calls = OPENERS.filter((o) => o.call && o.chars !== null && o.chars.includes(c)).sort(byOrder);
  return Object.freeze(calls.map((o) => o.call!));
});
const NO_CALLS: readonly CallRead[] = Object.freeze([]);

export const callsAt = (code: number): readonly CallRead[] => (code < 128 ? ASCII_CALLS[code]! : NO_CALLS);

/** Whether an opener's condition holds at `j`: true, or NO / MAYBE (the text ends before it can tell). */
export function openerHolds(where: OpenerWhere, buf: string, j: number, ctx: ScanContext): true | Candidate {
  switch (where) {
    case "anywhere":
      return true;
    case "boundary":
      return ctx.atBoundary || NO;
    case "lineStart":
      return ctx.atBoundary || ctx.atLineStart || NO;
    case "lineStartOrAfterSpace":
      return ctx.atBoundary || ctx.atLineStart || /\s/.test(ctx.prev) || NO;
    case "lineStartOrObjectNext": {
      if (ctx.atBoundary || ctx.atLineStart) return true;
      const k = skipSpace(buf, j + 1);
      if (k >= buf.length) return ctx.eof ? NO : MAYBE;
      return buf[k] === "{" || NO;
    }
  }
}

const lineOnly = (where: OpenerWhere): boolean => where === "boundary" || where === "lineStart";

/** Per ASCII character: 2 something may start there anywhere, 1 only at a line's start, 0 never. */
export const MAY_START: Uint8Array = (() => {
  const out = new Uint8Array(128);
  for (let code = 0; code < 128; code++) {
    const c = String.fromCharCode(code);
    const own = [
      ...LITERAL_STEPS.filter(([chars]) => chars.includes(c)).map(([, step]) => step.where),
      ...OPENERS.filter((o) => o.chars !== null && o.chars.includes(c)).map((o) => o.where),
    ];
    out[code] = own.some((w) => !lineOnly(w)) ? 2 : own.length > 0 ? 1 : 0;
  }
  return out;
})();
