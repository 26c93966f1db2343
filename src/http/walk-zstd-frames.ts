// What decoding a Zstandard stream will cost, read from its frame and block headers alone.
//
// A Zstandard decoder allocates each frame's window up front, as large as the frame's header says
// (up to 2 GiB): a few hostile bytes would take an isolate's whole memory before one byte of output
// could be counted against the body limit. And a streaming decoder slides its window after every
// block, so a stream of many tiny blocks costs blocks × window. So the frames are walked first,
// without decoding: each block's header gives its compressed size, which makes the walk linear in
// the input (RFC 8878 §3.1.1).

const ZSTD_MAGIC = 0xfd2fb528;
const BLOCK_RAW = 0;
const BLOCK_RLE = 1;
const BLOCK_COMPRESSED = 2;

/** `window`: the largest window a frame declares; `slide`: Σ blocks × window over the frames (bytes moved). */
export type ZstdWalk = { ok: true; window: number; slide: number } | { ok: false; reason: string };

const u32 = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** Little-endian unsigned integer of `n` bytes (n ≤ 8), as a double (exact up to 2^53). */
function uint(b: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = n - 1; i >= 0; i--) v = v * 256 + b[at + i]!;
  return v;
}

/** Every frame of `bytes` (Zstandard and skippable): the largest window and the bytes slid. */
export function walkZstdFrames(bytes: Uint8Array): ZstdWalk {
  let at = 0;
  let window = 0;
  let slide = 0;
  if (bytes.length === 0) return { ok: false, reason: "no Zstandard frame" };
  while (at < bytes.length) {
    if (at + 4 > bytes.length) return { ok: false, reason: "truncated frame magic" };
    const magic = u32(bytes, at);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // A skippable frame: 4 bytes of size, then that many bytes the decoder ignores.
      if (at + 8 > bytes.length) return { ok: false, reason: "truncated skippable frame" };
      at += 8 + u32(bytes, at + 4);
      if (at > bytes.length) return { ok: false, reason: "truncated skippable frame" };
      continue;
    }
    if (magic !== ZSTD_MAGIC) return { ok: false, reason: "not a Zstandard frame" };
    at += 4;
    if (at >= bytes.length) return { ok: false, reason: "truncated frame header" };
    const descriptor = bytes[at++]!;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictFlag = descriptor & 3;
    if (descriptor & 8) return { ok: false, reason: "reserved bit set in a frame header" };
    let frameWindow = 0;
    if (!singleSegment) {
      if (at >= bytes.length) return { ok: false, reason: "truncated frame header" };
      const wd = bytes[at++]!;
      const base = 2 ** (10 + (wd >> 3));
      frameWindow = base + (base / 8) * (wd & 7);
    }
    at += [0, 1, 2, 4][dictFlag]!;
    const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
    if (at + fcsBytes > bytes.length) return { ok: false, reason: "truncated frame header" };
    if (singleSegment) frameWindow = uint(bytes, at, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    at += fcsBytes;
    window = Math.max(window, frameWindow);
    for (let last = false; !last; ) {
      if (at + 3 > bytes.length) return { ok: false, reason: "truncated block header" };
      const header = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
      at += 3;
      last = (header & 1) === 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === BLOCK_RLE) at += 1;
      else if (type === BLOCK_RAW || type === BLOCK_COMPRESSED) at += size;
      else return { ok: false, reason: "reserved block type" };
      slide += frameWindow;
      if (at > bytes.length) return { ok: false, reason: "truncated block" };
    }
    at += checksum * 4;
    if (at > bytes.length) return { ok: false, reason: "truncated checksum" };
  }
  return { ok: true, window, slide };
}
