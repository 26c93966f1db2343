import { describe, expect, it } from "vitest";
import { decodeBody, MAX_BODY_CODINGS, parseContentEncoding, ZSTD_MAX_SLIDE_BYTES } from "../../../src/http/decode-body.ts";
import { readJsonBody } from "../../../src/http/read-json-body.ts";
import { walkZstdFrames } from "../../../src/http/walk-zstd-frames.ts";

// Compressed request bodies (Codex compresses with zstd; other clients gzip): decoded before the body
// limit, which counts decoded bytes, in bounded memory and time whatever the compressed bytes claim.

const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const JSON_BODY = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 4 };
// Node's zlib.zstdCompressSync(Buffer.from(JSON.stringify(JSON_BODY))): a single-segment frame with its content size.
const ZSTD_BODY = b64("KLUv/SBIBQIAggQPFaA5Y6jXCHBJUv920bRd1QJ5GKr6EA24N2Gia1hOboQ2cnyvhCspsVnhKt+IVM2Ce9E4u5ib8xthoTkLAA==");
const LIMIT = 4 * 1024 * 1024;
const tooLarge = () => Object.assign(new Error("too large"), { status: 413 });

async function compress(format: "gzip" | "deflate" | "deflate-raw", chunks: Iterable<Uint8Array>): Promise<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  }).pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
const encoded = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
function* zeros(total: number, chunk = 1 << 20) {
  const z = new Uint8Array(chunk);
  for (let left = total; left > 0; left -= chunk) yield left >= chunk ? z : z.subarray(0, left);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** `bytes` as one gzip member of stored (uncompressed) deflate blocks: a layer that costs a decoder its whole size and saves nothing. */
function gzipStored(bytes: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(bytes.length / 65535));
  const out = new Uint8Array(10 + blocks * 5 + bytes.length + 8);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  let at = 10;
  for (let b = 0; b < blocks; b++) {
    const part = bytes.subarray(b * 65535, (b + 1) * 65535);
    out.set([b === blocks - 1 ? 1 : 0, part.length & 0xff, part.length >> 8, ~part.length & 0xff, (~part.length >> 8) & 0xff], at);
    out.set(part, at + 5);
    at += 5 + part.length;
  }
  const view = new DataView(out.buffer);
  view.setUint32(at, crc32(bytes), true);
  view.setUint32(at + 4, bytes.length, true);
  return out;
}

/** A zstd frame header (no content size, `windowLog`) followed by `blocks` empty raw blocks, the last flagged. */
function tinyBlocks(windowLog: number, blocks: number): Uint8Array {
  const out = new Uint8Array(4 + 2 + blocks * 3);
  out.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3]);
  out[out.length - 3] = 1; // last block: raw, size 0
  return out;
}

/** A zstd frame of `blocks` RLE blocks, each 128 KiB of zeros from 4 bytes: 100 MiB from 3.2 KB at 800 blocks. */
function rleBomb(blocks: number): Uint8Array {
  const out = new Uint8Array(6 + blocks * 4);
  out.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3]);
  for (let i = 0; i < blocks; i++) {
    const header = (131072 << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    out.set([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0], 6 + i * 4);
  }
  return out;
}

describe("Content-Encoding", () => {
  it("lists the codings in the order applied, drops identity, and names the first unknown one", () => {
    expect(parseContentEncoding(null)).toEqual({ ok: true, codings: [] });
    expect(parseContentEncoding("identity")).toEqual({ ok: true, codings: [] });
    expect(parseContentEncoding("GZIP, zstd")).toEqual({ ok: true, codings: ["gzip", "zstd"] });
    expect(parseContentEncoding("x-gzip")).toEqual({ ok: true, codings: ["gzip"] });
    expect(parseContentEncoding("gzip, br")).toEqual({ ok: false, coding: "br" });
    expect(parseContentEncoding("compress")).toEqual({ ok: false, coding: "compress" });
  });
});

describe("decodeBody", () => {
  it("undoes zstd, gzip, zlib deflate, raw deflate and a chain of them", async () => {
    const plain = encoded(JSON_BODY);
    expect(JSON.parse(new TextDecoder().decode(await decodeBody(ZSTD_BODY, ["zstd"], LIMIT, tooLarge)))).toEqual(JSON_BODY);
    for (const [coding, format] of [["gzip", "gzip"], ["deflate", "deflate"], ["deflate", "deflate-raw"]] as const) {
      const bytes = await compress(format, [plain]);
      expect(await decodeBody(bytes, [coding], LIMIT, tooLarge), format).toEqual(plain);
    }
    const chained = await compress("gzip", [ZSTD_BODY]); // zstd applied first, then gzip
    expect(await decodeBody(chained, ["zstd", "gzip"], LIMIT, tooLarge)).toEqual(plain);
  });

  it("refuses a 100 MB gzip bomb once its decoded bytes pass the limit", async () => {
    const bomb = await compress("gzip", zeros(100 * 1024 * 1024));
    expect(bomb.byteLength).toBeLessThan(200_000);
    await expect(decodeBody(bomb, ["gzip"], LIMIT, tooLarge)).rejects.toMatchObject({ status: 413 });
  });

  it("refuses a 100 MB zstd bomb once its decoded bytes pass the limit, and decodes a small one whole", async () => {
    const started = Date.now();
    await expect(decodeBody(rleBomb(800), ["zstd"], LIMIT, tooLarge)).rejects.toMatchObject({ status: 413 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await decodeBody(rleBomb(2), ["zstd"], LIMIT, tooLarge)).toEqual(new Uint8Array(2 * 131072));
  });

  it("refuses zstd frames whose window or block count would cost more than the body is worth, before decoding", async () => {
    // A frame declaring a 1 GiB window: the decoder would allocate it up front.
    const hugeWindow = tinyBlocks(30, 1);
    expect(walkZstdFrames(hugeWindow)).toMatchObject({ ok: true, window: 2 ** 30 });
    await expect(decodeBody(hugeWindow, ["zstd"], LIMIT, tooLarge)).rejects.toMatchObject({ status: 413 });
    // 200,000 empty blocks under an 8 MiB window: the decoder would slide 8 MiB after each.
    const slides = tinyBlocks(23, 200_000);
    const walk = walkZstdFrames(slides);
    expect(walk.ok && walk.slide).toBeGreaterThan(ZSTD_MAX_SLIDE_BYTES);
    const started = Date.now();
    await expect(decodeBody(slides, ["zstd"], LIMIT, tooLarge)).rejects.toMatchObject({ status: 413 });
    expect(Date.now() - started).toBeLessThan(2000);
    // A few empty blocks under a small window are fine (and decode to nothing).
    expect(await decodeBody(tinyBlocks(17, 3), ["zstd"], LIMIT, tooLarge)).toEqual(new Uint8Array(0));
  });

  it("refuses bytes that are not what the header says with 400 invalid_content_encoding", async () => {
    for (const coding of ["gzip", "deflate", "zstd"] as const) {
      await expect(decodeBody(encoded(JSON_BODY), [coding], LIMIT, tooLarge), coding).rejects.toMatchObject({ status: 400, code: "invalid_content_encoding" });
    }
    await expect(decodeBody(ZSTD_BODY.subarray(0, 20), ["zstd"], LIMIT, tooLarge)).rejects.toMatchObject({ code: "invalid_content_encoding" });
  });
});

describe("stacked codings (issue 40, finding 3)", () => {
  // 120 stored gzip layers: each layer is the whole body again, so decoding them all is 120 times its
  // size (a 3.8 MB body held the isolate 9–14 s). More than MAX_BODY_CODINGS is refused before any
  // decoding, however large the body.
  const json = encoded({ ...JSON_BODY, messages: [{ role: "user", content: "a".repeat(60_000) }] });
  let stacked = json;
  for (let i = 0; i < 120; i++) stacked = gzipStored(stacked);
  const header = Array.from({ length: 120 }, () => "gzip").join(", ");

  it("the stored layers are real gzip: one layer decodes to the body", async () => {
    expect(await decodeBody(gzipStored(json), ["gzip"], LIMIT, tooLarge)).toEqual(json);
  });

  it("refuses a header of more than MAX_BODY_CODINGS codings with 415 at once, before decoding; two still decode", async () => {
    expect(MAX_BODY_CODINGS).toBe(2);
    expect(parseContentEncoding(header)).toEqual({ ok: false, layers: 120 });
    expect(parseContentEncoding("gzip, gzip, gzip")).toEqual({ ok: false, layers: 3 });
    expect(parseContentEncoding(Array.from({ length: 5000 }, () => "identity").join(","))).toEqual({ ok: true, codings: [] });
    const request = new Request("http://x/", { method: "POST", body: stacked, headers: { "content-encoding": header } });
    const started = Date.now();
    const refused = await readJsonBody(request, LIMIT).then(
      () => null,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(200);
    expect(refused).toMatchObject({ status: 415, code: "unsupported_content_encoding", param: "Content-Encoding" });
    expect((refused as Error).message).toContain("at most 2");
    await expect(decodeBody(stacked, Array(120).fill("gzip"), LIMIT, tooLarge)).rejects.toMatchObject({ status: 415 });
    expect(await decodeBody(gzipStored(gzipStored(json)), ["gzip", "gzip"], LIMIT, tooLarge)).toEqual(json);
  });
});

describe("readJsonBody with a compressed body", () => {
  const post = (body: Uint8Array, encoding: string) => new Request("http://x/", { method: "POST", body, headers: { "content-encoding": encoding } });

  it("reads it as the JSON it encodes; counts decoded bytes against the limit; 415 for an unknown coding", async () => {
    expect(await readJsonBody(post(ZSTD_BODY, "zstd"), LIMIT)).toEqual(JSON_BODY);
    expect(await readJsonBody(post(await compress("gzip", [encoded(JSON_BODY)]), "gzip"), LIMIT)).toEqual(JSON_BODY);
    // 60 KB of JSON compresses far below a 50 KB limit, but decoded it is over it.
    const long = encoded({ ...JSON_BODY, messages: [{ role: "user", content: "a".repeat(60_000) }] });
    const small = await compress("gzip", [long]);
    expect(small.byteLength).toBeLessThan(50_000);
    await expect(readJsonBody(post(small, "gzip"), 50_000)).rejects.toMatchObject({ status: 413, code: "request_too_large" });
    await expect(readJsonBody(post(encoded(JSON_BODY), "br"), LIMIT)).rejects.toMatchObject({ status: 415, code: "unsupported_content_encoding" });
  });
});
