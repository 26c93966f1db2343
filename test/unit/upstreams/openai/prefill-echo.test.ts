// PrefillEcho: a continued answer begins with its prefill whether or not the server echoed it.
import { describe, expect, it } from "vitest";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { PrefillEcho } from "../../../../src/upstreams/openai/prefill-echo.ts";

const text = (delta: string): UpstreamEvent => ({ type: "text", delta });
const run = (prefill: string, events: UpstreamEvent[]) => {
  const echo = new PrefillEcho(prefill);
  return [...events.flatMap((e) => echo.push(e)), ...echo.end()];
};
const joined = (events: UpstreamEvent[]) => events.map((e) => (e.type === "text" ? e.delta : `<${e.type}>`)).join("");

describe("PrefillEcho", () => {
  it("not echoed: the prefill goes first", () => {
    expect(joined(run("Hello wo", [text("rld"), { type: "finish", reason: "stop" }]))).toBe("Hello world<finish>");
  });

  it("not echoed, though the first pieces look like the prefill: decided when they part", () => {
    expect(joined(run("Hello wo", [text("Hel"), text("p!"), { type: "finish", reason: "stop" }]))).toBe("Hello woHelp!<finish>");
  });

  it("echoed in one piece or several (llama-server): passed as it is", () => {
    expect(joined(run("Hello wo", [text("Hello world")]))).toBe("Hello world");
    expect(joined(run("Hello wo", [text("Hel"), text("lo w"), text("orld")]))).toBe("Hello world");
  });

  it("reasoning passes while deciding", () => {
    const out = run("ab", [text("a"), { type: "reasoning", delta: "r" }, text("bc")]);
    expect(out).toEqual([{ type: "reasoning", delta: "r" }, text("a"), text("bc")]);
  });

  it("a tool call or a finish decides: not echoed", () => {
    expect(joined(run("ab", [{ type: "toolCall", index: 0, name: "f", argumentsDelta: "{}" }]))).toBe("ab<toolCall>");
  });

  it("an error lets the held text go as it came", () => {
    const error: UpstreamEvent = { type: "error", error: { status: 502, type: "server_error", code: "upstream_error", message: "x" } };
    expect(run("abc", [text("a"), error])).toEqual([text("a"), error]);
  });

  it("an empty prefill changes nothing", () => {
    expect(run("", [text("x")])).toEqual([text("x")]);
  });
});
