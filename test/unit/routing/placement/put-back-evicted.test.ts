// Which evicted models go back after a failed router load: against the router's own list, within its room.
import { describe, expect, it } from "vitest";
import { modelsToPutBack } from "../../../../src/routing/placement/put-back-evicted.ts";
import type { ModelPoolRead } from "../../../../src/upstreams/adapter.ts";

const read = (modelsMax: number, spec: Record<string, "loaded" | "unloaded" | "loading">): ModelPoolRead => ({
  modelsMax,
  models: Object.entries(spec).map(([id, status]) => ({ id, status, failed: false })),
});

describe("modelsToPutBack", () => {
  it("puts back what the router no longer holds", () => {
    expect(modelsToPutBack(["alpha"], read(1, { alpha: "unloaded", broken: "unloaded" }))).toEqual(["alpha"]);
  });

  it("a stale guess of two evictions on --models-max 1: only the one the router lacks, the most recent first, within its room", () => {
    // The isolate thought alpha and gamma were both loaded; the router held gamma only and evicted it.
    expect(modelsToPutBack(["alpha", "gamma"], read(1, { alpha: "unloaded", gamma: "unloaded", broken: "unloaded" }))).toEqual(["gamma"]);
  });

  it("nothing when the model is still there, or the router is full again (another request loaded one)", () => {
    expect(modelsToPutBack(["alpha"], read(1, { alpha: "loaded" }))).toEqual([]);
    expect(modelsToPutBack(["alpha"], read(1, { alpha: "unloaded", beta: "loading" }))).toEqual([]);
  });

  it("room for two: both, the most recent first; a model the router no longer lists is not asked for", () => {
    expect(modelsToPutBack(["alpha", "beta"], read(2, { alpha: "unloaded", beta: "unloaded" }))).toEqual(["beta", "alpha"]);
    expect(modelsToPutBack(["alpha", "gone"], read(2, { alpha: "unloaded" }))).toEqual(["alpha"]);
  });

  it("the router did not answer its list: the most recently used guess alone (one load evicts one model)", () => {
    expect(modelsToPutBack(["alpha", "gamma"], null)).toEqual(["gamma"]);
    expect(modelsToPutBack([], null)).toEqual([]);
  });
});
