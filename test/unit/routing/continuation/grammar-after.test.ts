import { describe, expect, it } from "vitest";
import { grammarAfter, literalGrammar, literalOf } from "../../../../src/routing/continuation/grammar-after.ts";

describe("grammarAfter", () => {
  it("reads a one-literal grammar with GBNF escapes", () => {
    expect(literalOf('root ::= "a \\"b\\" \\\\ \\n\\t\\x41\\u00e9\\U0001F600"')).toBe('a "b" \\ \n\tAé😀');
    expect(literalOf(`root ::= ${JSON.stringify("quote \" and \\ and \n")}`)).toBe('quote " and \\ and \n');
  });
  it("is null for anything but one literal", () => {
    expect(literalOf('root ::= "a" | "b"')).toBeNull();
    expect(literalOf('root ::= "a" "b"')).toBeNull();
    expect(literalOf('root ::= [a-z]+')).toBeNull();
    expect(literalOf('root ::= "a"\nx ::= "b"')).toBeNull();
    expect(literalOf('root ::= "\\q"')).toBeNull();
  });
  it("round-trips any text through literalGrammar", () => {
    for (const t of ["", "plain", 'q"uote\\', "line\nbreak\r\ttab", "\u0001ctl\u007f", "ünï😀"]) expect(literalOf(literalGrammar(t))).toBe(t);
  });
  it("cuts the literal after what was written; null when the text left it", () => {
    const g = `root ::= ${JSON.stringify("The quick brown fox")}`;
    expect(literalOf(grammarAfter(g, "The quick")!)).toBe(" brown fox");
    expect(literalOf(grammarAfter(g, "The quick brown fox")!)).toBe("");
    expect(grammarAfter(g, "The slow")).toBeNull();
    expect(grammarAfter('root ::= [a-z]+', "abc")).toBeNull();
  });
});
