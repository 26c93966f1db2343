// Undoes a request body's Content-Encoding (gzip, deflate, zstd), counting DECODED bytes against the
// body limit, so a small compressed bomb is refused with 413 in bounded memory.
import { Decompress } from "fzstd";
import { ProxyError } from "../errors/proxy-error.ts";
import { concatBytes, readCapped } from "./read-capped.ts";
import { walkZstdFrames } from "./walk-zstd-frames.ts";

export type BodyCoding = "gzip" | "deflate" | "zstd";

/**
 * Zstandard frames may declare a window this large even when the body limit is smaller (the
 * compressor's default for a stream of unknown size is 2–8 MiB); a larger one is refused (413).
 */
export const ZSTD_MAX_WINDOW_BYTES = 8 * 1024 * 1024;
/**
 * The decoder moves its window after every block: a body of many tiny blocks would cost blocks ×
 * window. A real compressor writes blocks of up to 128 KiB (4 MiB is 32 blocks); past this many
 * bytes moved the body is refused (413) before any is decoded.
 */
export const ZSTD_MAX_SLIDE_BYTES = 512 * 1024 * 1024;

/**
 * At most this many codings on one body. Real clients send one; two covers a deliberate chain. Each
 * layer is decoded whole and held to the body limit, so the work of decoding a body is at most this
 * many times the limit: 120 stored gzip layers of a 3.8 MB body cost the isolate 9–14 s (issue 40).
 */
export const MAX_BODY_CODINGS = 2;

export type ParsedCodings = { ok: true; codings: BodyCoding[] } | { ok: false; coding: string } | { ok: false; layers: number };

/**
 * `Content-Encoding`'s codings in the order they were applied (`identity` dropped); the first unknown
 * one otherwise, or the count when there are more than MAX_BODY_CODINGS (refused before any decoding).
 */
export function parseContentEncoding(header: string | null): ParsedCodings {
  const codings: BodyCoding[] = [];
  for (const raw of (header ?? "").split(",")) {
    const coding = raw.trim().toLowerCase();
    if (coding === "" || coding === "identity") continue;
    if (coding === "gzip" || coding === "x-gzip") codings.push("gzip");
    else if (coding === "deflate" || coding === "zstd") codings.push(coding);
    else return { ok: false, coding: raw.trim() };
  }
  if (codings.length > MAX_BODY_CODINGS) return { ok: false, layers: codings.length };
  return { ok: true, codings };
}

/** The 415 for a Content-Encoding refused before decoding: an unknown coding, or too many layers. */
export function refusedEncoding(parsed: { coding: string } | { layers: number }): ProxyError {
  if ("coding" in parsed) return unsupportedEncoding(parsed.coding);
  return new ProxyError({
    status: 415,
    code: "unsupported_content_encoding",
    param: "Content-Encoding",
    message: `Content-Encoding lists ${parsed.layers} codings; at most ${MAX_BODY_CODINGS} are accepted. Compress the body once (gzip, deflate or zstd).`,
  });
}

export function unsupportedEncoding(coding: string): ProxyError {
  return new ProxyError({
    status: 415,
    code: "unsupported_content_encoding",
    param: "Content-Encoding",
    message: `Content-Encoding "${coding.slice(0, 40)}" is not supported; send the body uncompressed, or with gzip, deflate or zstd.`,
  });
}

function invalidEncoding(coding: BodyCoding, why: string): ProxyError {
  return new ProxyError({
    status: 400,
    code: "invalid_content_encoding",
    param: "Content-Encoding",
    message: `The request body is not valid ${coding} data (${why}); check the Content-Encoding header matches the body.`,
  });
}

/**
 * `bytes` decoded through `codings` (last applied, first undone); `tooLarge()` once any decoded form
 * passes `maxBytes`. More than MAX_BODY_CODINGS is refused before any is undone, so the whole decode
 * costs at most that many times the limit.
 */
export async function decodeBody(bytes: Uint8Array, codings: readonly BodyCoding[], maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (codings.length > MAX_BODY_CODINGS) throw refusedEncoding({ layers: codings.length });
  let out = bytes;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    out = coding === "zstd" ? unzstd(out, maxBytes, tooLarge) : await inflate(out, coding, maxBytes, tooLarge);
  }
  return out;
}

/** gzip, or deflate: zlib-wrapped as HTTP says, or raw as some clients send it (told apart by the zlib header). */
async function inflate(bytes: Uint8Array, coding: "gzip" | "deflate", maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  const zlibHeader = bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0;
  const format = coding === "gzip" ? "gzip" : zlibHeader ? "deflate" : "deflate-raw";
  const decoded = slices(bytes).pipeThrough(new DecompressionStream(format));
  let over: Error | undefined;
  try {
    return await readCapped(decoded, maxBytes, () => (over = tooLarge()));
  } catch (e) {
    if (e === over) throw e;
    throw invalidEncoding(coding, e instanceof Error ? e.message : String(e));
  }
}

/**
 * The compressed bytes a slice at a time, as the decoder asks for them: deflate expands at most
 * about 1,032×, so what is decoded ahead of the size check stays a few MiB even for a bomb.
 */
function slices(bytes: Uint8Array, size = 4096): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.length) controller.close();
        else controller.enqueue(bytes.subarray(at, (at += size)));
      },
    },
    { highWaterMark: 0 },
  );
}

class OverLimit extends Error {}

function unzstd(bytes: Uint8Array, maxBytes: number, tooLarge: () => Error): Uint8Array {
  const walk = walkZstdFrames(bytes);
  if (!walk.ok) throw invalidEncoding("zstd", walk.reason);
  if (walk.window > Math.max(maxBytes, ZSTD_MAX_WINDOW_BYTES) || walk.slide > ZSTD_MAX_SLIDE_BYTES) throw tooLarge();
  const parts: Uint8Array[] = [];
  let size = 0;
  const decoder = new Decompress((chunk) => {
    size += chunk.byteLength;
    if (size > maxBytes) throw new OverLimit();
    parts.push(chunk);
  });
  try {
    decoder.push(bytes, true);
  } catch (e) {
    if (e instanceof OverLimit) throw tooLarge();
    throw invalidEncoding("zstd", e instanceof Error ? e.message : String(e));
  }
  return concatBytes(parts, size);
}
