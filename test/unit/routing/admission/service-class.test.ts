import { describe, expect, it } from "vitest";
import { FairQueue } from "../../../../src/routing/admission/fair-queue.ts";
import { admissionLevel, classAbove, type AdmissionClass } from "../../../../src/routing/admission/service-class.ts";
import { CONTINUATION_PRIORITY } from "../../../../src/routing/admission/queue-place.ts";
import { askedTier, servedTier } from "../../../../src/auth/service-tier.ts";
import { keptFree, verdictFor } from "../../../../src/routing/admission/capacity.ts";
import { KEY_PRIORITY_MAX } from "../../../../src/auth/key-record.ts";

const drain = (q: FairQueue<string>) => [...(function* () {
  for (let w = q.shift(); w !== undefined; w = q.shift()) yield w;
})()];

describe("service classes in the admission line", () => {
  it("classes are strict, whatever the key's priority; the default class keeps the key priorities as levels", () => {
    expect(admissionLevel("default", 0)).toBe(0);
    expect(admissionLevel("default", 7)).toBe(7);
    const classes: AdmissionClass[] = ["batch", "flex", "default", "priority"];
    for (let i = 0; i + 1 < classes.length; i++) {
      expect(admissionLevel(classes[i + 1]!, -KEY_PRIORITY_MAX)).toBeGreaterThan(admissionLevel(classes[i]!, KEY_PRIORITY_MAX));
      expect(classAbove(classes[i + 1]!, classes[i]!)).toBe(true);
    }
    // A continuation goes ahead of every class.
    expect(CONTINUATION_PRIORITY).toBeGreaterThan(admissionLevel("priority", KEY_PRIORITY_MAX));
  });

  it("a batch line waits behind every interactive waiter; keys take turns inside a class; key priority orders inside a class", () => {
    const q = new FairQueue<string>();
    q.push("batch-a1", "a", admissionLevel("batch", 1000));
    q.push("flex-a1", "a", admissionLevel("flex", 1000));
    q.push("def-a1", "a", admissionLevel("default", 0));
    q.push("def-a2", "a", admissionLevel("default", 0));
    q.push("def-b1", "b", admissionLevel("default", 0));
    q.push("def-hi", "c", admissionLevel("default", 5));
    q.push("prio-b1", "b", admissionLevel("priority", -1000));
    q.push("batch-b1", "b", admissionLevel("batch", 0));
    expect(drain(q)).toEqual(["prio-b1", "def-hi", "def-a1", "def-b1", "def-a2", "flex-a1", "batch-a1", "batch-b1"]);
  });
});

describe("service_tier", () => {
  it("reads OpenAI's and Anthropic's spellings; refuses others", () => {
    expect(askedTier(undefined)).toBe("default");
    expect(askedTier("auto")).toBe("default");
    expect(askedTier("standard_only")).toBe("default");
    expect(askedTier("flex")).toBe("flex");
    expect(askedTier("priority")).toBe("priority");
    expect(askedTier("gold")).toBeUndefined();
  });
  it("is served at most at the key's maxServiceTier (asking above it is served at the cap, as OpenAI does)", () => {
    expect(servedTier("priority", "default")).toBe("default");
    expect(servedTier("priority", "priority")).toBe("priority");
    expect(servedTier("flex", "default")).toBe("flex");
    expect(servedTier("default", "flex")).toBe("flex");
  });
});

describe("a batch line leaves slots free (batch.keepFreeSlots)", () => {
  const plan = [{ server: "s" }];
  const load = (slots: number, busy: number) => () => ({ slots, busy });
  it("takes a slot only while keepFree others stay free, but never needs every slot of a server", () => {
    expect(verdictFor(plan, load(2, 0), undefined, 0, 1).kind).toBe("free");
    expect(verdictFor(plan, load(2, 1), undefined, 0, 1).kind).toBe("full");
    expect(verdictFor(plan, load(2, 1), undefined, 0, 0).kind).toBe("free");
    expect(verdictFor(plan, load(1, 0), undefined, 0, 1).kind).toBe("free");
    expect(verdictFor(plan, load(4, 2), undefined, 0, 2).kind).toBe("full");
    expect(keptFree(1, 1)).toBe(0);
    expect(keptFree(8, 2)).toBe(2);
  });
});
