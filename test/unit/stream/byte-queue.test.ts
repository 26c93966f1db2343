import { describe, expect, it } from "vitest";
import { ByteQueue } from "../../../src/responders/byte-queue.ts";

const enc = new TextEncoder();

describe("ByteQueue", () => {
  it("appends text as TextEncoder encodes it; taken views stay intact while the buffer grows", () => {
    const q = new ByteQueue();
    const texts = Array.from({ length: 3000 }, (_, i) => `data: {"n":${i},"s":"Grüße, 世界 👋 ${"x".repeat(i % 97)}"}\n\n`);
    const views = texts.map((t) => {
      q.text(t);
      return q.take();
    });
    views.forEach((v, i) => expect(v).toEqual(enc.encode(texts[i])));
  });

  it("joins everything appended between takes, across buffer growth, in order", () => {
    const q = new ByteQueue();
    let expected = "";
    const taken: Uint8Array[] = [];
    for (let i = 0; i < 2000; i++) {
      const s = `frame ${i} ${"é".repeat(i % 50)}\n`;
      expected += s;
      if (i % 3 === 0) q.bytes(enc.encode(s));
      else if (i % 3 === 1) q.text(s);
      else {
        q.text(s.slice(0, 5));
        q.text(s.slice(5));
      }
      // Take only now and then: up to ~50 KiB wait, as behind a slow write.
      if (i % 400 === 399) taken.push(q.take()!);
    }
    q.text("end");
    expected += "end";
    taken.push(q.take()!);
    expect(q.take()).toBeNull();
    expect(q.size).toBe(0);
    expect(taken.map((v) => new TextDecoder().decode(v)).join("")).toBe(expected);
  });

  it("jsonStringBetween gives JSON.stringify's bytes for every kind of character", () => {
    const values = ["", "plain ascii ~\u007f", 'a "quote"', "back\\slash", "nl\n tab\t nul\u0000 \u001f", "wörld 👋", "lone \ud800 and \udc00", "line\u2028sep", "x".repeat(20_000)];
    const q = new ByteQueue();
    const none = new Uint8Array(0);
    for (const v of values) {
      q.jsonStringBetween(none, v, none);
      expect(new TextDecoder().decode(q.take()!)).toBe(JSON.stringify(v));
    }
    // Between constant bytes, the same JSON, whatever the value holds.
    for (const v of values) {
      q.jsonStringBetween(enc.encode("data: {"), v, enc.encode("}\n\n"));
      expect(new TextDecoder().decode(q.take()!)).toBe(`data: {${JSON.stringify(v)}}\n\n`);
    }
    // A bail-out half way through a literal leaves nothing behind.
    q.jsonStringBetween(enc.encode("["), "abc\u00e9", enc.encode("]"));
    expect(new TextDecoder().decode(q.take()!)).toBe('["abcé"]');
  });

  it("long text (beyond a quarter buffer), lone surrogates, empty input", () => {
    const q = new ByteQueue();
    const long = "é".repeat(40_000);
    q.text(long);
    expect(q.take()).toEqual(enc.encode(long));
    q.text("a\ud800b");
    expect(q.take()).toEqual(enc.encode("a\ud800b"));
    q.text("");
    q.bytes(new Uint8Array(0));
    expect(q.take()).toBeNull();
  });
});
