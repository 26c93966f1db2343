// The linear-time engine that runs client patterns (src/toolcalls/scoring/linear-regex.ts) gives
// V8's RegExp answer (`u` flag) on every pattern it accepts: checked against V8 on hand-picked
// patterns and on random texts over each pattern's alphabet, and in linear time on near misses.

import { describe, expect, it } from "vitest";
import { compileLinear } from "../../../src/toolcalls/scoring/linear-regex.ts";

const PATTERNS = [
  "^[a-z]+$", "abc", "^abc$", "a|b|", "^(a|ab)(c|bcd)(d*)$", "^(?:a+)+$", "^(a*)*b$", "x*", "^$", "",
  "^\\d{3}-\\d{2,4}$", "^[a-zA-Z0-9_-]{1,8}$", "a{2,}", "^a{0,3}b?$", "(?<name>ab)+c", "^.+$", "a.c",
  "\\bfoo\\b", "\\Boo", "^\\s*\\S+\\s*$", "^[^]$", "a[]", "^[\\s\\d]+$", "^[[a]+$", "\\p{L}+", "^\\P{Lu}*$",
  "^\\u00e9\\u{1F600}$", "^\\uD83D\\uDE00$", "^\\x41\\cJ?$", "\\.json$", "^https?://[^/]+/", "^(?:[a-f0-9]{2})*$",
  "^\\w+@\\w+\\.(com|org)$", "^[\\u0041-\\u005A]+$", "(a|b)*abb", "^(ab|a)*$", "^\\$\\d+(\\.\\d\\d)?$", "\\0", "[\\b]",
  "^(?:)*$", "(^a|b$)", "^a*?b+?$",
];
const TEXTS = ["", "a", "abc", "abcd", "aab", "xabcx", "123-45", "123-456789", "Ab_9", "foo bar", "foobar", "é😀", "😀", "A\n",
  "  word  ", "a\nb", "a\u00a0b", "[a", "aaaaaaaaaaaaaaaa!", "ab", "abb", "aabb", "$12.50", "x@y.com", "http://h/p", "AZ",
  "deadbeef", "dead_beef", "\0", "\b", "a.json", "ÉTÉ", "été", "\ud83d", "b", "ba"];

describe("linear-regex gives V8's answer", () => {
  for (const p of PATTERNS) {
    it(`/${p}/u`, () => {
      const native = new RegExp(p, "u");
      const linear = compileLinear(p);
      expect(linear).not.toBeNull();
      for (const t of TEXTS) expect([t, linear!.test(t)]).toEqual([t, native.test(t)]);
      // Random texts over the pattern's own characters find the cases the fixed list misses.
      const alphabet = Array.from(new Set([...p.replace(/[\\^$]/g, ""), "a", "b", " ", "1", "\n"]));
      let seed = p.length + 7;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
      for (let k = 0; k < 200; k++) {
        const t = Array.from({ length: rand(12) }, () => alphabet[rand(alphabet.length)]).join("");
        expect([t, linear!.test(t)]).toEqual([t, native.test(t)]);
      }
    });
  }
});

describe("what has no linear-time meaning is refused", () => {
  it("lookaround, backreferences, modifiers", () => {
    for (const p of ["(?=a)a", "(?!a)b", "(?<=x)_", "(?<!x)_", "^(a)\\1$", "(?<n>a)\\k<n>", "(?i:a)"]) expect(compileLinear(p)).toBeNull();
  });
  it("a program past its bound", () => {
    expect(compileLinear("(?:a{100}){100}", 5000)).toBeNull();
  });
});

describe("linear time", () => {
  it("nested repetition against a near miss of 20,000 characters", () => {
    const text = "a".repeat(20_000) + "!";
    const re = compileLinear("^(a+)+$")!;
    const t0 = performance.now();
    expect(re.test(text)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
