import { describe, expect, it } from "vitest";
import { EchoStrip } from "../../../../src/routing/continuation/echo-strip.ts";

const text = (delta: string) => ({ type: "text" as const, delta });

describe("EchoStrip", () => {
  it("cuts the echoed prefill off the first delta, as a --jinja llama-server sends it", () => {
    const s = new EchoStrip("The quick brown");
    expect(s.push(text("The quick brown f"))).toEqual([text(" f")]);
    expect(s.done).toBe(true);
    expect(s.push(text("ox"))).toEqual([text("ox")]);
  });
  it("holds an echo split over deltas; an exact echo yields nothing", () => {
    const s = new EchoStrip("abcdef");
    expect(s.push(text("abc"))).toEqual([]);
    expect(s.push({ type: "reasoning", delta: "r" })).toEqual([{ type: "reasoning", delta: "r" }]);
    expect(s.push(text("def"))).toEqual([]);
    expect(s.done).toBe(true);
    expect(s.push(text("g"))).toEqual([text("g")]);
  });
  it("a continuation that does not begin with the prefill diverged (a closed turn, a new answer)", () => {
    expect(new EchoStrip("The quick").push(text(" brown"))).toBe("diverged");
    expect(new EchoStrip("The quick").push(text("The slow one"))).toBe("diverged");
    const s = new EchoStrip("The quick");
    expect(s.push(text("The"))).toEqual([]);
    expect(s.push({ type: "finish", reason: "stop" })).toBe("diverged");
  });
  it("a replay repeats the reasoning and the text sent: both are cut off, then the rest flows", () => {
    const s = new EchoStrip("The ans", "Let me think.");
    expect(s.push({ type: "reasoning", delta: "Let me " })).toEqual([]);
    expect(s.push({ type: "reasoning", delta: "think." })).toEqual([]);
    expect(s.push(text("The answer."))).toEqual([text("wer.")]);
    expect(s.done).toBe(true);
  });
  it("a replay with more reasoning than was sent hands on the rest of it", () => {
    const s = new EchoStrip("", "Let me");
    expect(s.push({ type: "reasoning", delta: "Let me think." })).toEqual([{ type: "reasoning", delta: " think." }]);
    expect(s.done).toBe(true);
    expect(s.push(text("Done."))).toEqual([text("Done.")]);
  });
  it("a replay that reasons otherwise, leaves its reasoning early, or calls a tool before the repeat diverged", () => {
    expect(new EchoStrip("", "Let me think.").push({ type: "reasoning", delta: "Hmm" })).toBe("diverged");
    expect(new EchoStrip("x", "Let me think.").push(text("x"))).toBe("diverged");
    expect(new EchoStrip("", "Let me").push({ type: "toolCall", index: 0, name: "f", argumentsDelta: "" })).toBe("diverged");
  });
});
