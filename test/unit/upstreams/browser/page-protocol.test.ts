import { describe, expect, it } from "vitest";
import { CLOSE, PONG_TEXT, RELAY_VERSION } from "../../../../src/schemas/relay.ts";
import { readPageMessage, requestMessage } from "../../../../src/upstreams/browser/page-protocol.ts";
import type { Session } from "../../../../src/upstreams/browser/session.ts";

const fresh: Session = { sessionId: "s_1", connectedAt: 0, models: [], ready: false };
const ready: Session = { ...fresh, ready: true, models: ["m"] };
const hello = (extra: Record<string, unknown> = {}) => JSON.stringify({ type: "hello", version: RELAY_VERSION, models: ["m"], ...extra });

describe("readPageMessage: what a page's message means for its session", () => {
  it("hello: the session is ready with its models and capabilities, and welcomed", () => {
    const a = readPageMessage(hello({ capabilities: { completions: true }, agent: "Firefox" }), fresh, 5);
    expect(a.kind).toBe("reply");
    if (a.kind !== "reply") return;
    expect(a.session).toEqual({ ...fresh, ready: true, models: ["m"], capabilities: { completions: true }, agent: "Firefox" });
    expect(JSON.parse(a.reply)).toMatchObject({ type: "welcome", version: RELAY_VERSION, sessionId: "s_1" });
  });

  it("a ping the runtime did not answer: pong, and its time kept as the session's liveness", () => {
    expect(readPageMessage('{ "type": "ping" }', ready, 1234)).toEqual({ kind: "reply", session: { ...ready, pingedAt: 1234 }, reply: PONG_TEXT });
  });

  it("a request's messages after hello are answers, passed on as sent", () => {
    const raw = JSON.stringify({ type: "done", id: "rl_1", usage: null });
    expect(readPageMessage(raw, ready, 0)).toEqual({ kind: "answer", message: { type: "done", id: "rl_1", usage: null }, raw });
  });

  it("protocol breaks are refused with the close code that says which", () => {
    const refusal = (raw: string | ArrayBuffer, s: Session) => {
      const a = readPageMessage(raw, s, 0);
      return a.kind === "refuse" ? [a.code, a.reason] : a.kind;
    };
    expect(refusal(new ArrayBuffer(4), ready)).toEqual([CLOSE.malformed, "binary messages are not part of the protocol"]);
    expect(refusal("not json", ready)[0]).toBe(CLOSE.malformed);
    expect(refusal(hello(), ready)).toEqual([CLOSE.malformed, "hello was already sent on this socket"]);
    expect(refusal(hello({ version: RELAY_VERSION + 1 }), fresh)[0]).toBe(CLOSE.unsupportedVersion);
    expect(refusal(JSON.stringify({ type: "done", id: "rl_1" }), fresh)).toEqual([CLOSE.malformed, "done before hello"]);
  });
});

describe("requestMessage", () => {
  it("chat keeps the version-1 message (no endpoint); the others name theirs", () => {
    expect(JSON.parse(requestMessage("rl_1", "chat", { a: 1 }))).toEqual({ type: "request", id: "rl_1", body: { a: 1 } });
    expect(JSON.parse(requestMessage("rl_1", "embeddings", {}))).toEqual({ type: "request", id: "rl_1", endpoint: "embeddings", body: {} });
  });
});
