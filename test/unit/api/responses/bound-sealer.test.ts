import { describe, expect, it } from "vitest";
import { bindSealer, createSealer } from "../../../../src/api/responses/sealer.ts";
import { openReasoning, sealReasoning } from "../../../../src/api/responses/sealed-reasoning.ts";
import { compactionItem, openCompaction } from "../../../../src/api/responses/compaction-item.ts";

// A sealed token carries its owner (the key that got it) in its associated data.

const deployment = createSealer(new Uint8Array(32).fill(7));
const alice = bindSealer(deployment, "key:alice");
const bob = bindSealer(deployment, "key:bob");

describe("bindSealer", () => {
  it("a reasoning token opens for the key that got it, and for no other key", () => {
    const token = sealReasoning(alice, "The user wants a greeting.");
    expect(openReasoning(alice, token)).toBe("The user wants a greeting.");
    expect(openReasoning(bob, token)).toBeNull();
    expect(openReasoning(deployment, token)).toBeNull();
    expect(openReasoning(alice, sealReasoning(deployment, "unbound"))).toBeNull();
  });

  it("a compaction item likewise", () => {
    const item = compactionItem(alice, "Alice's summary.");
    expect(openCompaction(alice, item.encrypted_content)).toBe("Alice's summary.");
    expect(openCompaction(bob, item.encrypted_content)).toBeNull();
  });

  it("signatures are bound too", () => {
    const sig = alice.sign("messages.thinking", "Let me think.");
    expect(alice.verify("messages.thinking", "Let me think.", sig)).toBe(true);
    expect(bob.verify("messages.thinking", "Let me think.", sig)).toBe(false);
  });
});
