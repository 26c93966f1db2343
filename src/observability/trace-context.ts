// W3C Trace Context: a client's `traceparent` read (its trace becomes ours, its span our parent) and
// the one Switchyard sends upstream for each attempt (pure, apart from the random ids).
import { randomHex } from "../lib/ids.ts";

export interface TraceParent {
  traceId: string;
  /** The caller's span: our server span's parent. */
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A `traceparent` header, or null when it is absent or invalid (the W3C rules: version ff, an
 * all-zero trace or span id, and a version 00 header with more fields are invalid; a later version
 * is read by its first four fields).
 */
export function parseTraceParent(header: string | null | undefined): TraceParent | null {
  if (!header) return null;
  const m = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** A `traceparent` for a request made under `traceId` by span `spanId`. */
export function formatTraceParent(traceId: string, spanId: string, sampled = true): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

export const newTraceId = (): string => randomHex("", 16);
export const newSpanId = (): string => randomHex("", 8);
