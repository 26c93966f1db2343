import { describe, expect, it } from "vitest";
import { Utf8Slab } from "../../../src/stream/utf8-slab.ts";

describe("Utf8Slab", () => {
  const enc = new TextEncoder();

  it("encodes exactly as TextEncoder, and earlier views stay intact across slabs", () => {
    const slab = new Utf8Slab();
    const texts = Array.from({ length: 3000 }, (_, i) => `data: {"n":${i},"s":"Grüße, 世界 👋 ${"x".repeat(i % 97)}"}\n\n`);
    const views = texts.map((t) => slab.encode(t));
    views.forEach((v, i) => expect(v).toEqual(enc.encode(texts[i])));
  });

  it("a long string (beyond a quarter slab) and a lone surrogate", () => {
    const slab = new Utf8Slab();
    const long = "é".repeat(40_000);
    expect(slab.encode(long)).toEqual(enc.encode(long));
    expect(slab.encode("a\ud800b")).toEqual(enc.encode("a\ud800b"));
    expect(slab.encode("")).toEqual(new Uint8Array(0));
  });
});
