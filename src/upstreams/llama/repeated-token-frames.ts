// The fast path of llama-server's stream: token frames that repeat the one before are read from
// their delta alone, without JSON or SSE parsing.
import type { UpstreamEvent } from "../../events/events.ts";

// Nearly every frame llama-server streams is one content (or reasoning) delta whose other bytes
// repeat those of the frame before:
//   data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"<token>"}}],"created":…,"object":"chat.completion.chunk"}
// Once such a frame was parsed in full and gave nothing but its delta (`learn`), later frames with
// the same opening and the same tail differ only in the delta's string literal: they are read from
// that literal alone — from the raw bytes when the body is between frames (`readBytes`: no UTF-8
// decoding, no SSE parsing of the ~250 bytes around a ~4-byte token), else from the frame's text
// (`readData`). Anything else is left to the full parse, which stays the reference.

/** How llama-server opens a frame that carries one token of content or reasoning. */
const CONTENT_HEAD = '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"';
const REASONING_HEAD = '{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"';
/** A string literal's body with an escape, a quote or a raw control character: read with JSON.parse. */
const NOT_PLAIN = /[\\"\u0000-\u001f]/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const utf8 = new TextEncoder();
// Literals are decoded whole (no state between calls): one decoder for every stream.
const literalDecoder = new TextDecoder();
const CONTENT_LINE = utf8.encode(`data: ${CONTENT_HEAD}`);
const REASONING_LINE = utf8.encode(`data: ${REASONING_HEAD}`);

type Kind = "text" | "reasoning";

/** Whether `bytes` holds `pattern` at `at`. */
function bytesAt(bytes: Uint8Array, at: number, pattern: Uint8Array): boolean {
  if (at + pattern.length > bytes.length) return false;
  for (let i = 0; i < pattern.length; i++) if (bytes[at + i] !== pattern[i]) return false;
  return true;
}

/** JSON string literal body (between its quotes) → its value, or null when it is not one. */
function parseLiteral(body: string): string | null {
  try {
    const v: unknown = JSON.parse(`"${body}"`);
    return typeof v === "string" ? v : null;
  } catch {
    return null;
  }
}

export class RepeatedTokenFrames {
  /** What follows the delta's closing quote in the learned frame, as text and as the SSE frame's bytes (with its blank line). */
  private tail: string | null = null;
  private tailLine: Uint8Array | null = null;

  /** True once a frame was learned: `readBytes` and `readData` may then succeed. */
  get armed(): boolean {
    return this.tail !== null;
  }

  /**
   * After a full parse of `data` gave `events`: remember its tail if the frame was a plain token
   * frame (nothing but its delta), else forget what was known.
   */
  learn(data: string, events: UpstreamEvent[], json: { usage?: unknown; timings?: unknown; error?: unknown }): void {
    this.tail = null;
    this.tailLine = null;
    const kind = headOf(data);
    if (kind === null || json.usage !== undefined || json.timings !== undefined || json.error !== undefined) return;
    const start = (kind === "text" ? CONTENT_HEAD : REASONING_HEAD).length;
    let end = start;
    while (end < data.length && data.charCodeAt(end) !== QUOTE) end += data.charCodeAt(end) === BACKSLASH ? 2 : 1;
    if (end >= data.length) return;
    const text = literal(data, start, end);
    // A frame with logprobs is never learned: read from its literal alone, a later frame whose tail
    // happened to repeat it would lose its own.
    const only = text !== null && (events.length === 0 ? text === "" : events.length === 1 && events[0]!.type === kind && (events[0] as { delta: string }).delta === text && !("logprobs" in events[0]!));
    if (!only) return;
    this.tail = data.slice(end + 1);
    this.tailLine = utf8.encode(`${this.tail}\n\n`);
  }

  /** One frame's data (SSE already parsed): its event, `null` for an empty delta, or undefined when it is not a repeated token frame. */
  readData(data: string): UpstreamEvent | null | undefined {
    const tail = this.tail;
    if (tail === null) return undefined;
    const kind = headOf(data);
    if (kind === null) return undefined;
    const start = (kind === "text" ? CONTENT_HEAD : REASONING_HEAD).length;
    const end = data.length - tail.length - 1;
    if (end < start || data.charCodeAt(end) !== QUOTE || data.slice(end + 1) !== tail) return undefined;
    const text = literal(data, start, end);
    if (text === null) return undefined;
    return text === "" ? null : { type: kind, delta: text };
  }

  /**
   * Reads whole repeated token frames (`data: …\n\n`) from `bytes` starting at `at`, which must be
   * the start of a line with no SSE event pending. Each delta goes to `emit`. Returns the index of
   * the first byte not read: the start of a frame that is not one of them, or the end of a partial one.
   */
  readBytes(bytes: Uint8Array, at: number, emit: (e: UpstreamEvent) => void): number {
    const tailLine = this.tailLine;
    if (tailLine === null) return at;
    while (at < bytes.length) {
      let kind: Kind;
      let start: number;
      if (bytesAt(bytes, at, CONTENT_LINE)) {
        kind = "text";
        start = at + CONTENT_LINE.length;
      } else if (bytesAt(bytes, at, REASONING_LINE)) {
        kind = "reasoning";
        start = at + REASONING_LINE.length;
      } else {
        return at;
      }
      // The literal ends at the first quote not escaped; ASCII without escapes is read as is.
      let end = start;
      let plain = true;
      let ascii = true;
      for (; end < bytes.length; end++) {
        const c = bytes[end]!;
        if (c === QUOTE) break;
        if (c === BACKSLASH) {
          plain = false;
          end++;
        } else if (c < 0x20) {
          return at;
        } else if (c >= 0x80) {
          ascii = false;
        }
      }
      if (end >= bytes.length || !bytesAt(bytes, end + 1, tailLine)) return at;
      let text: string | null;
      if (ascii && plain) {
        text = "";
        for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]!);
      } else {
        const body = literalDecoder.decode(bytes.subarray(start, end));
        text = plain ? body : parseLiteral(body);
        if (text === null) return at;
      }
      if (text !== "") emit({ type: kind, delta: text });
      at = end + 1 + tailLine.length;
    }
    return at;
  }
}

// slice + === rather than startsWith: several times faster in V8 on these short strings.
function headOf(data: string): Kind | null {
  if (data.slice(0, CONTENT_HEAD.length) === CONTENT_HEAD) return "text";
  if (data.slice(0, REASONING_HEAD.length) === REASONING_HEAD) return "reasoning";
  return null;
}

/** The delta in `data[start, end)` (between the literal's quotes), or null when that is not one JSON string. */
function literal(data: string, start: number, end: number): string | null {
  const raw = data.slice(start, end);
  return NOT_PLAIN.test(raw) ? parseLiteral(raw) : raw;
}
