// What the rendered prompt left open for the output. A template may end its generation prompt
// inside a reasoning block (`<think>\n`, a prefilled `[THINK]I'm`, harmony's analysis channel) or
// inside a call header (Functionary's `>>>`); a parser that sees only the output cannot tell such
// a block from plain text until its closing marker comes, and a stream cannot wait for it.

import { REASONING_MARKERS } from "../dialects/marker-table.ts";

interface Opener {
  open: string;
  close: string;
  /** Markers that end the block without closing it (read next as what they are). */
  ends?: readonly string[];
  /** The opener is prose the model would otherwise write itself: it is part of the reasoning. */
  keep?: boolean;
}

/**
 * Openers only a prompt ends with: matched in the generation prompt, never in the output (where
 * harmony headers and plain prose are read by their own rules).
 */
const PROMPT_OPENERS: Opener[] = [
  { open: "<|channel|>analysis<|message|>", close: "<|end|>" },
  // Apriel 1.6 opens the reasoning with a sentence and closes it with a bracketed marker.
  { open: "Here are my reasoning steps:", close: "[BEGIN FINAL RESPONSE]", keep: true },
];

function openers(): Opener[] {
  const out: Opener[] = [];
  for (const [open, build] of REASONING_MARKERS) {
    const c = build(open);
    if (c.kind === "reasoning") out.push({ open, close: c.close[0]!, ends: c.ends });
  }
  return [...out, ...PROMPT_OPENERS];
}

const OPENERS = openers();

/** Every closing marker of a reasoning block: what ends a block whose opener is not known. */
export const ALL_REASONING_CLOSES: readonly string[] = [...new Set(OPENERS.map((o) => o.close))];

export interface PromptState {
  /** The prompt's text from the opening marker of a reasoning block it did not close (`<think>\n`). */
  reasoning: string | null;
  /** A call header the prompt opened, which the output goes on with (`>>>`). */
  header: string | null;
}

export function promptState(prompt: string): PromptState {
  return { reasoning: reasoningOpenAtEnd(prompt), header: prompt.endsWith(">>>") ? ">>>" : null };
}

/**
 * The prompt's text from the opening marker of a reasoning block it opened and did not close
 * (`<think>\n`, `[THINK]I'm`), or null.
 */
export function reasoningOpenAtEnd(prompt: string): string | null {
  let best: { at: number } | null = null;
  for (const { open, close } of OPENERS) {
    const at = prompt.lastIndexOf(open);
    if (at < 0 || prompt.indexOf(close, at + open.length) >= 0) continue;
    if (!best || at > best.at) best = { at };
  }
  return best ? prompt.slice(best.at) : null;
}

/** The opener that `opened` (an opening marker and what followed it) starts with. */
export function openerOf(opened: string): { close: string; ends?: readonly string[]; keep: boolean } | null {
  let best: Opener | null = null;
  for (const o of OPENERS) if (opened.startsWith(o.open) && (!best || o.open.length > best.open.length)) best = o;
  return best ? { close: best.close, ends: best.ends, keep: best.keep === true } : null;
}

/**
 * Closing markers that only ever close reasoning (`</think>`, `[/THINK]`, `<|END_THINKING|>`…), not
 * the end-of-message tokens some reasoning blocks also end with (`<|end|>` ends every harmony or
 * Phi-3 message): only these show, in a complete text, a block the prompt must have opened.
 */
const REASONING_ONLY_CLOSES: readonly string[] = REASONING_MARKERS.flatMap(([marker, build]) => {
  const c = build(marker);
  return c.kind === "drop" && c.strayClose ? [marker] : [];
});

/**
 * A complete text that closes a reasoning block it never opened (`…reasoning…</think>answer`):
 * the opener the template must have put in the prompt, or null.
 */
export function openerClosedAhead(text: string): string | null {
  let best: { at: number; open: string } | null = null;
  for (const close of REASONING_ONLY_CLOSES) {
    const at = text.indexOf(close);
    const openers = OPENERS.filter((o) => o.close === close);
    if (at < 0 || openers.length === 0 || openers.some((o) => text.lastIndexOf(o.open, at) >= 0)) continue;
    if (!best || at < best.at) best = { at, open: openers[0]!.open };
  }
  return best?.open ?? null;
}
