import { describe, expect, it } from "vitest";
import { SendPace } from "../../../../src/api/responses/socket-pace.ts";
import { chainAfter, chainedBody } from "../../../../src/api/responses/socket-turn.ts";
import { utf8Bytes } from "../../../../src/api/responses/utf8-bytes.ts";

// What one Responses WebSocket may make its isolate hold (issue 40, findings 1 and 2): sizes in
// UTF-8 bytes, a chained conversation not kept past the body limit, and the pace of what it sends.

describe("utf8Bytes", () => {
  it("counts bytes as TextEncoder does, not UTF-16 units", () => {
    for (const text of ["", "ascii", "é".repeat(10), "€ and 😀", "lone \ud800 surrogate", "\udc00 first", "end \ud83d"]) {
      expect(utf8Bytes(text)).toBe(new TextEncoder().encode(text).length);
    }
  });
});

describe("a socket's chain", () => {
  const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

  it("is measured in UTF-8 bytes and not kept past the limit", () => {
    const sent = { model: "m", input: [user("é".repeat(1000))] };
    const kept = chainAfter("resp_1", sent, [], 4096);
    expect(kept.bytes).toBe(utf8Bytes(kept.itemsJson!));
    expect(kept.bytes).toBeGreaterThan(2000); // 1000 characters, 2000 bytes
    const dropped = chainAfter("resp_1", sent, [], 1500);
    expect(dropped).toMatchObject({ id: "resp_1", itemsJson: null });
    expect(dropped.bytes).toBe(kept.bytes);
  });

  it("a body chained to the last response carries the conversation; chained to another, it is sent as it is", () => {
    const last = chainAfter("resp_1", { input: "first" }, [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }], 1 << 20);
    const body = chainedBody({ model: "m", previous_response_id: "resp_1", input: [user("second")] }, last);
    expect(body.previous_response_id).toBeUndefined();
    expect((body.input as Array<{ role: string }>).map((i) => i.role)).toEqual(["user", "assistant", "user"]);
    const other = { model: "m", previous_response_id: "resp_2", input: "x" };
    expect(chainedBody(other, last)).toBe(other);
  });
});

describe("SendPace", () => {
  it("goes on while what was sent fits the bucket, then waits as long as the excess takes to drain", () => {
    const pace = new SendPace(1000, 1000, 0); // 1000 bytes, drained at 1000 bytes a second
    pace.sent(800, 0);
    expect(pace.next(0)).toEqual({ kind: "go" });
    pace.sent(700, 0); // 1500 queued: 500 over
    expect(pace.next(0)).toEqual({ kind: "wait", ms: 500 });
    expect(pace.next(500)).toEqual({ kind: "go" }); // drained back to 1000
  });

  it("gives up on a response held back longer than a full bucket takes to drain, and counts each response afresh", () => {
    const pace = new SendPace(1000, 1000, 0);
    let now = 0;
    let step = pace.next(now);
    // A client that never reads, behind an upstream faster than the assumed rate: 400 bytes per step.
    for (let i = 0; i < 100 && step.kind !== "give-up"; i++) {
      if (step.kind === "wait") now += step.ms;
      pace.sent(400, now);
      step = pace.next(now);
    }
    expect(step).toEqual({ kind: "give-up" });
    expect(now).toBeLessThanOrEqual(pace.holdLimitMs); // what waited: at most twice the bucket
    pace.startResponse();
    expect(pace.next(now + 10_000)).toEqual({ kind: "go" });
  });
});
