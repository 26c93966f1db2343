import { describe, expect, it } from "vitest";
import { call } from "../workerd/harness.ts";
import { chat, llama, vars } from "./fault-harness.ts";

// The outside tester's finding: with the README's setup (a llama target, then a browser target) and
// no session connected, the answer was 503 no_capacity until the dead llama's circuit opened and it
// was tried last; from then on, its 502 upstream_unreachable. The answer must not depend on the order.

let n = 0;
/** A closed port with a path of its own, so this test's llama has its own health record and circuit. */
const deadLlama = () => llama(`http://127.0.0.1:9/u-final-${Date.now().toString(36)}${++n}`);
const noSessionModel = () => `Nobody-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f16_1-MLC`;

describe("every target fails: one answer whatever the order and the circuits", () => {
  it("a dead llama then a declared browser with no session: 503 no_capacity with Retry-After before and after the llama's circuit opens", async () => {
    const dead = deadLlama();
    const model = noSessionModel();
    const cfg = vars([dead, { kind: "browser", model }], { circuit: { failureThreshold: 2, cooldownMs: 60_000 } });
    const answers: Array<{ body: any; headers: Headers; status: number }> = [];
    for (let i = 0; i < 6; i++) {
      const { res } = await chat({ stream: i % 2 === 0, vars: cfg });
      answers.push({ status: res.status, headers: res.headers, body: await res.json() });
    }
    // Every answer, stream or not, before and after the circuit opened.
    expect(answers.map((a) => `${a.status} ${a.body.error?.code} retry-after:${a.headers.get("retry-after") ?? "none"}`)).toEqual(Array(6).fill("503 no_capacity retry-after:5"));
    const orders: string[] = [];
    for (const { body, headers } of answers) {
      expect(headers.get("x-switchyard-attempts")).toBe("2");
      const outcomes = headers.get("x-switchyard-outcomes") ?? "";
      expect(outcomes).toContain("llama:127.0.0.1:9=upstream_unreachable");
      expect(outcomes).toContain(`browser:${model}=no_capacity`);
      expect(body.x_switchyard).toEqual({
        attempts: 2,
        outcomes: expect.arrayContaining([
          { target: "llama:127.0.0.1:9", code: "upstream_unreachable", status: 502 },
          { target: `browser:${model}`, code: "no_capacity", status: 503 },
        ]),
      });
      orders.push(outcomes.split("; ").map((o) => o.split(":")[0]).join(","));
    }
    // The circuit opened after two failures: the llama went from first to last, and the answer stayed.
    expect(orders.slice(0, 2)).toEqual(["llama,browser", "llama,browser"]);
    expect(orders.at(-1)).toBe("browser,llama");
  });

  it("the same on /v1/messages: Anthropic's overloaded_error and x-switchyard-outcomes", async () => {
    const dead = deadLlama();
    const model = noSessionModel();
    const cfg = vars([dead, { kind: "browser", model }], { circuit: { failureThreshold: 1, cooldownMs: 60_000 } });
    for (let i = 0; i < 3; i++) {
      const { res } = await call("/v1/messages", { json: { model: "m", max_tokens: 16, messages: [{ role: "user", content: "hi" }] } }, cfg);
      const body = (await res.json()) as any;
      expect(res.status).toBe(503);
      expect(body).toMatchObject({ type: "error", error: { type: "overloaded_error", code: "no_capacity" } });
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(res.headers.get("x-switchyard-outcomes")).toContain(`browser:${model}=no_capacity`);
      expect(res.headers.get("x-switchyard-outcomes")).toContain("llama:127.0.0.1:9=upstream_unreachable");
    }
  });
});
