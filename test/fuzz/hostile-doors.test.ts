// The adversarial suite's round-two doors (issue 40): every llama-server field rule of
// src/schemas/llama-fields.ts on every door that generates, and stacked content codings of any depth,
// each answered with its documented 4xx envelope before any upstream is asked, within a fixed time.
// The cases come from the rule table itself, so a field added to it is tried here on every door.
import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, received } from "../workerd/harness.ts";
import { LLAMA_FIELDS, type FieldRule } from "../../src/schemas/llama-fields.ts";

const ANTHROPIC = { "anthropic-version": "2023-06-01" };
/** A refusal is decided on the body alone: far below this even on a loaded two-core machine. */
const REFUSAL_MS = 1_500;

/** Every door that runs a model, with the fields of a hostile body (a tag to find it upstream). */
const DOORS: Array<[path: string, body: (tag: string, extra: Record<string, unknown>) => unknown, headers?: Record<string, string>]> = [
  ["/v1/chat/completions", (tag, extra) => ({ model: "m", messages: [{ role: "user", content: tag }], max_tokens: 8, ...extra })],
  ["/v1/chat/completions", (tag, extra) => ({ model: "m", messages: [{ role: "user", content: tag }], max_tokens: 8, stream: true, ...extra })],
  ["/v1/completions", (tag, extra) => ({ model: "m", prompt: tag, max_tokens: 8, ...extra })],
  ["/v1/responses", (tag, extra) => ({ model: "m", input: tag, max_output_tokens: 8, store: false, ...extra })],
  ["/v1/messages", (tag, extra) => ({ model: "m", messages: [{ role: "user", content: tag }], max_tokens: 8, ...extra }), ANTHROPIC],
  ["/v1/embeddings", (tag, extra) => ({ model: "m", input: tag, ...extra })],
];

/** A value out of the rule (or none: a pass rule has no hostile value). */
function outOf(rule: FieldRule): unknown {
  if ("pass" in rule) return undefined;
  if ("max" in rule) return rule.max * 1000 + 1;
  // Something the rule does not allow: a number where it allows numbers, else true.
  return typeof rule.only[0] === "number" ? (rule.only[0] as number) + 7 : Array.isArray(rule.only[0]) ? [{ id: 0, scale: 1 }] : true;
}

const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/${encodeURIComponent("unreached")}` }] } });

describe("hostile llama-server fields on every door (issue 40, finding 4)", () => {
  const hostile = Object.entries(LLAMA_FIELDS).flatMap(([field, rule]) => (outOf(rule) === undefined ? [] : [[field, outOf(rule)] as const]));

  it("the table has fields to try", () => expect(hostile.length).toBeGreaterThan(8));

  it("each field out of its rule is a 400 naming it, on every door, and no upstream is asked", { timeout: 120_000 }, async () => {
    const tag = `doors-${crypto.randomUUID()}`;
    for (const [path, body, headers] of DOORS) {
      for (const [field, value] of hostile) {
        const started = performance.now();
        const { res, done } = await call(path, { json: body(tag, { [field]: value }), headers }, vars);
        const answer = await res.json<any>();
        await done();
        const where = `${path} ${field}=${JSON.stringify(value)}`;
        expect(res.status, `${where}: ${JSON.stringify(answer)}`).toBe(400);
        if (headers === ANTHROPIC) expect(answer, where).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining(field) } });
        else expect(answer.error, where).toMatchObject({ type: "invalid_request_error", param: field, code: expect.stringMatching(/^(unsupported_parameter|invalid_value)$/) });
        expect(performance.now() - started, where).toBeLessThan(REFUSAL_MS);
      }
    }
    expect((await received()).filter((r) => r.body.includes(tag))).toHaveLength(0);
  });
});

describe("stacked content codings on every door (issue 40, finding 3)", () => {
  it("3, 10, 120 and 1,000 codings are each refused 415 at once, whatever the bytes, and no upstream is asked", { timeout: 60_000 }, async () => {
    const tag = `codings-${crypto.randomUUID()}`;
    const bytes = new TextEncoder().encode(`${JSON.stringify({ model: "m", input: tag, prompt: tag, messages: [] })}${" ".repeat(1_000_000)}`);
    for (const layers of [3, 10, 120, 1000]) {
      const header = Array.from({ length: layers }, (_, i) => (i % 2 ? "deflate" : "gzip")).join(", ");
      for (const [path, , headers] of DOORS) {
        const started = performance.now();
        const { res, done } = await call(path, { method: "POST", body: bytes, headers: { "content-type": "application/json", "content-encoding": header, ...headers } }, vars);
        const text = await res.text();
        await done();
        expect(res.status, `${path} ${layers} codings: ${text.slice(0, 200)}`).toBe(415);
        expect(text, path).toContain("unsupported_content_encoding");
        expect(performance.now() - started, `${path} ${layers}`).toBeLessThan(REFUSAL_MS);
      }
    }
    expect((await received()).filter((r) => r.body.includes(tag))).toHaveLength(0);
  });
});
