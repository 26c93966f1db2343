import { describe, expect, it } from "vitest";
import { createSealer, openField, sealField } from "../../../../src/api/responses/sealer.ts";

const ours = createSealer(new Uint8Array(32).fill(7));
const theirs = createSealer(new Uint8Array(32).fill(8));

describe("sealer", () => {
  it("seals and opens text for one purpose; each token is new (random nonce) and hides the text", () => {
    const a = ours.seal("responses.reasoning", "I should list the files first. ✓");
    const b = ours.seal("responses.reasoning", "I should list the files first. ✓");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^sy1\.[A-Za-z0-9_-]+$/);
    expect(a).not.toContain("files");
    expect(ours.open("responses.reasoning", a)).toBe("I should list the files first. ✓");
  });

  it("a token never opens for another purpose, under another deployment's key, or altered", () => {
    const token = ours.seal("responses.reasoning", "secret");
    expect(ours.open("responses.compaction", token)).toBeNull();
    expect(theirs.open("responses.reasoning", token)).toBeNull();
    const body = token.slice(4);
    const flipped = `sy1.${body.slice(0, 10)}${body[10] === "A" ? "B" : "A"}${body.slice(11)}`;
    expect(ours.open("responses.reasoning", flipped)).toBeNull();
    for (const junk of ["", "sy1.", "sy1.!!!", "gAAAAABo-openai-encrypted", `sy1.${"A".repeat(30)}`]) expect(ours.open("responses.reasoning", junk)).toBeNull();
  });

  it("signs and verifies: another text, purpose or key does not verify", () => {
    const sig = ours.sign("messages.thinking", "Let me think.");
    expect(ours.verify("messages.thinking", "Let me think.", sig)).toBe(true);
    expect(ours.verify("messages.thinking", "Let me think!", sig)).toBe(false);
    expect(ours.verify("responses.reasoning", "Let me think.", sig)).toBe(false);
    expect(theirs.verify("messages.thinking", "Let me think.", sig)).toBe(false);
    expect(ours.verify("messages.thinking", "Let me think.", "")).toBe(false);
  });

  it("sealField/openField round-trip one named string; another shape or no sealer gives null", () => {
    const token = sealField(ours, "responses.compaction", "summary", "Wrote hello.txt.");
    expect(openField(ours, "responses.compaction", "summary", token)).toBe("Wrote hello.txt.");
    expect(openField(ours, "responses.compaction", "text", token)).toBeNull();
    expect(openField(undefined, "responses.compaction", "summary", token)).toBeNull();
    expect(openField(ours, "responses.compaction", "summary", ours.seal("responses.compaction", "not json"))).toBeNull();
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => createSealer(new Uint8Array(16))).toThrow(/32 bytes/);
  });
});
