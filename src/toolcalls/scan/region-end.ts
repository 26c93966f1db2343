// Decides where a candidate region (a call's text after its opening marker) ends, incrementally:
// at its closing marker, at the next opening marker, or, for a bracketed body, right after the
// value when no closing marker follows (a missing `</tool_call>`). Until that can be decided it
// answers null and the stream holds the region back.

import { BalancedScanner } from "../text/balanced-scanner.ts";
import type { RegionSpec } from "../dialects/candidate.ts";
import type { TextRope } from "../text/text-rope.ts";

export interface RegionEnd {
  /** End of the region's own text (the body handed to the parser). */
  bodyEnd: number;
  /** How much of the text after the opening marker the region consumes. */
  consumed: number;
  /** Its closing marker was seen. */
  closed: boolean;
  /** The output ended inside the bracketed value. */
  cutOff: boolean;
  /** The region can no longer be a call (strict pythonic followed by more prose). */
  rejected: boolean;
}

const isSpace = (c: string) => c === " " || c === "\n" || c === "\r" || c === "\t";

/** Look this far ahead for the start of the value before giving up on a soft end. */
const VALUE_START_WINDOW = 512;

interface Ends {
  markers: readonly string[];
  longest: number;
}

/**
 * A spec's closing and reopening markers in one list. Kept per spec for the specs marker-table.ts
 * shares (frozen); a spec built per region (`<function=NAME>`) is not kept: a weak map entry per
 * region cost more in garbage collection than the list.
 */
const ENDS = new WeakMap<RegionSpec, Ends>();
function endsOf(spec: RegionSpec): Ends {
  const shared = Object.isFrozen(spec);
  let ends = shared ? ENDS.get(spec) : undefined;
  if (!ends) {
    const markers = spec.reopen.length === 0 ? spec.close : spec.close.length === 0 ? spec.reopen : [...spec.close, ...spec.reopen];
    let longest = 0;
    for (const m of markers) longest = Math.max(longest, m.length);
    ends = { markers, longest };
    if (shared) ENDS.set(spec, ends);
  }
  return ends;
}

/**
 * The region's end when a closing or reopening marker is written right after the opening one (in
 * `buf` at `at`): what RegionTracker.advance would answer, without a tracker. A marker repeated
 * back to back opens one such region per repeat, and each cost a tracker and a first search.
 */
export function endAtOnce(spec: RegionSpec, buf: string, at: number): RegionEnd | null {
  const { markers } = endsOf(spec);
  for (const m of markers) {
    // The first marker in list order at the earliest index, as findMarker chooses.
    if (buf.startsWith(m, at)) {
      const closed = spec.close.includes(m);
      return { bodyEnd: 0, consumed: closed ? m.length : 0, closed, cutOff: false, rejected: false };
    }
  }
  return null;
}

export class RegionTracker {
  readonly spec: RegionSpec;
  private readonly markers: readonly string[];
  private readonly longest: number;
  private base = 0;
  private searchFrom = 0;
  private hit: { index: number; length: number } | null = null;
  private valueFrom = -1;
  private scanner: BalancedScanner | null = null;
  /** Where the last value ended while we wait to see what follows it. */
  private pendingEnd = -1;
  /** How far the whitespace after `pendingEnd` has been walked. */
  private spaceEnd = -1;

  constructor(spec: RegionSpec) {
    this.spec = spec;
    const ends = endsOf(spec);
    this.markers = ends.markers;
    this.longest = ends.longest;
  }

  private findMarker(text: TextRope | string): void {
    if (this.hit || this.markers.length === 0) return;
    // Only the text that arrived since the last look, plus a marker's length before it; read in
    // windows that double, so finding a marker costs its distance, not the length of all the text
    // after it (a whole text handed over at once, with a marker every few characters, copied the
    // rest of the text once per region).
    let from = Math.max(this.base, this.searchFrom - this.longest + 1);
    const end = text.length;
    // The first window is small: a marker repeated back to back ends its region at once, and a
    // first look over 256 characters per region was most of what such a flood cost.
    for (let size = Math.max(32, 2 * this.longest); ; size *= 2) {
      const to = Math.min(end, from + size);
      const window = text.slice(from, to);
      let best: { index: number; length: number } | null = null;
      for (const m of this.markers) {
        const i = window.indexOf(m);
        if (i >= 0 && (!best || from + i < best.index)) best = { index: from + i, length: this.spec.close.includes(m) ? m.length : 0 };
      }
      if (best || to >= end) {
        this.hit = best;
        break;
      }
      // The next window starts a marker's length back, so a marker across the edge is found whole.
      from = Math.max(from + 1, to - this.longest + 1);
    }
    this.searchFrom = end;
  }

  private atMarker(hit: { index: number; length: number }, cutOff: boolean): RegionEnd {
    return {
      bodyEnd: hit.index - this.base,
      consumed: hit.index - this.base + hit.length,
      closed: hit.length > 0,
      cutOff,
      rejected: false,
    };
  }

  /**
   * Where the region ends, or null to wait. The region's body is `text` from `base` on (the text
   * after the opening marker); the answer's offsets are relative to `base`.
   */
  advance(text: TextRope | string, base: number, eof: boolean): RegionEnd | null {
    this.base = base;
    const end = (at: number, cutOff: boolean): RegionEnd => ({
      bodyEnd: at - base,
      consumed: at - base,
      closed: false,
      cutOff,
      rejected: false,
    });
    this.findMarker(text);
    const { spec } = this;
    if (this.valueFrom === -1 && spec.valueStart) {
      const head = text.slice(base, base + VALUE_START_WINDOW);
      let v = spec.valueStart(head, eof);
      if (v === -1 && head.length >= VALUE_START_WINDOW) v = -2;
      this.valueFrom = v >= 0 ? base + v : v;
      if (this.valueFrom >= 0) this.scanner = new BalancedScanner(this.valueFrom);
    } else if (this.valueFrom === -1) this.valueFrom = -2;

    const hit = this.hit;
    if (this.valueFrom === -1) {
      if (hit) return this.atMarker(hit, false);
      return eof ? end(text.length, true) : null;
    }
    if (!this.scanner || (hit && hit.index <= this.valueFrom && this.pendingEnd < 0)) {
      if (hit) return this.atMarker(hit, false);
      return eof ? end(text.length, false) : null;
    }

    for (;;) {
      let valueEnd = this.pendingEnd;
      if (valueEnd < 0) {
        valueEnd = this.scanner.scan(text);
        if (hit && (valueEnd < 0 || valueEnd > hit.index)) return this.atMarker(hit, true);
        if (valueEnd < 0) return eof ? end(text.length, true) : null;
        this.pendingEnd = valueEnd;
      }
      // The spaces after the value were walked up to `spaceEnd` by the last look: a stream of
      // whitespace after a value is read once, not again with every piece of it.
      let k = Math.max(valueEnd, this.spaceEnd);
      if (spec.lineEnd) {
        while (text.charAt(k) === " " || text.charAt(k) === "\t") k++;
        this.spaceEnd = k;
        if (k === text.length && !eof) return null;
        const ok = k === text.length || text.charAt(k) === "\n" || text.charAt(k) === "\r";
        return { ...end(valueEnd, false), rejected: !ok };
      }
      while (k < text.length && isSpace(text.charAt(k))) k++;
      this.spaceEnd = k;
      // A closing marker or another value may still follow.
      if (k === text.length && !eof) return null;
      if (hit && hit.index === k) return this.atMarker(hit, false);
      const rest = text.slice(k, k + 64);
      if (!eof && this.markers.some((m) => m.startsWith(rest) && rest.length < m.length)) return null;
      const next = text.charAt(k);
      if (spec.multi && (next === "{" || next === "[")) {
        this.scanner = new BalancedScanner(k);
        this.pendingEnd = -1;
        this.spaceEnd = -1;
        continue;
      }
      return end(valueEnd, false);
    }
  }
}
