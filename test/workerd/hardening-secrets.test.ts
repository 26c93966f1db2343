import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, received } from "./harness.ts";

// An upstream that quotes what it received (here a misbehaving proxy echoing the request's
// Authorization header in a 400): no configured secret reaches the client's body or headers, or
// the Worker's logs.

const upstreamKey = `sk-upstream-${crypto.randomUUID()}`;
const tag = `u-${crypto.randomUUID()}`;
const vars = {
  ...configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/${tag}/behave/echo-authorization`, apiKeySecret: "ECHO_UPSTREAM_KEY" }] } }),
  ECHO_UPSTREAM_KEY: upstreamKey,
};
const messages = [{ role: "user", content: "hi" }];

// /v1/messages itself is left out until src/api/messages/index.ts awaits its thinking signer before it
// starts the run: an upstream refusing that fast is otherwise an unhandled rejection. count_tokens
// covers its error shape.
const REQUESTS: Array<[string, unknown]> = [
  ["/v1/chat/completions", { model: "m", messages }],
  ["/v1/chat/completions", { model: "m", messages, stream: true }],
  ["/v1/completions", { model: "m", prompt: "hi" }],
  ["/v1/embeddings", { model: "m", input: "hi" }],
  ["/v1/responses", { model: "m", input: "hi" }],
  ["/v1/responses", { model: "m", input: "hi", stream: true }],
  ["/v1/messages/count_tokens", { model: "m", messages }],
];

const logs: string[] = [];
const original = { log: console.log, error: console.error, warn: console.warn, info: console.info, debug: console.debug };
beforeAll(() => {
  for (const level of ["log", "error", "warn", "info", "debug"] as const) {
    console[level] = (...args: unknown[]) => {
      logs.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      original[level](...args);
    };
  }
});
afterAll(() => Object.assign(console, original));

describe("an upstream that echoes Switchyard's key for it", () => {
  it("is refused as upstream_error with the key redacted, on every endpoint; no log line holds it", async () => {
    for (const [path, json] of REQUESTS) {
      const { res, done } = await call(path, { json }, vars);
      const body = await res.text();
      await done();
      const where = `${path} ${JSON.stringify(json)}`;
      expect(res.status, where).toBe(400);
      expect(body, where).toContain("[redacted]");
      expect(body, where).not.toContain(upstreamKey);
      expect(JSON.stringify([...res.headers]), where).not.toContain(upstreamKey);
    }
    // The key did go upstream (so the echo had something to leak).
    const seen = (await received()).filter((r) => r.path.startsWith(`/behave/echo-authorization`));
    expect(seen.some((r) => r.headers.authorization === `Bearer ${upstreamKey}`)).toBe(true);
    expect(logs.join("\n")).not.toContain(upstreamKey);
  });
});
