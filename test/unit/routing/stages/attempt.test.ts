// The attempt stage (src/routing/attempt/attempt-targets.ts): targets tried in turn until one yields its first event,
// a refused parse answered again as raw text, browser-like targets given the prompt's chain.
import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig, type Config } from "../../../../src/config/config.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { resetHealthCache } from "../../../../src/health/health-client.ts";
import { Deadlines } from "../../../../src/lib/deadlines.ts";
import { attemptTargets, type AttemptOptions } from "../../../../src/routing/attempt/attempt-targets.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { named } from "../../../../src/upstreams/registry/adapters.ts";
import type { Upstream } from "../../../../src/upstreams/upstream.ts";
import { FakeUpstream, finish, text } from "./fake-upstream.ts";

const parsed = parseConfig({ SWITCHYARD_ENV: "dev" });
if (!parsed.ok) throw new Error("default config");
const config: Config = { ...parsed.config, retries: { ...parsed.config.retries, backoffMs: 1, maxBackoffMs: 2 }, queue: { ...parsed.config.queue, maxWaitMs: 0 } };

let n = 0;
const llama = (): Target => named({ kind: "llama", url: `http://10.1.0.${++n}:8080` });
const browser = (): Target => named({ kind: "browser", model: "m" });

function options(upstreams: Map<Target, Upstream>): AttemptOptions {
  return {
    request: { model: "m", messages: [{ role: "user", content: "hello" }] },
    requestId: "req_test",
    config,
    env: {},
    signal: new AbortController().signal,
    deadlines: new Deadlines(config.timeouts.commitMs),
    upstreamFor: (t) => upstreams.get(t)!,
  };
}

describe("the attempt stage", () => {
  beforeEach(() => resetHealthCache());

  it("answers from the first target that yields an event, counting every try", async () => {
    const [a, b] = [llama(), llama()];
    const down = new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "down" });
    const ups = new Map<Target, Upstream>([
      [a, new FakeUpstream("a", [down, down, down])],
      [b, new FakeUpstream("b", [[text("hi"), finish()]])],
    ]);
    const started = await attemptTargets([a, b], options(ups));
    expect(started.target).toBe(b);
    expect(started.first).toEqual(text("hi"));
    expect(started.attempts).toBeGreaterThanOrEqual(2);
    expect(await started.events.next()).toEqual(finish());
  });

  it("a refused parse is answered again as the same server's raw text, a try of its own", async () => {
    const a = llama();
    const refused = new ProxyError({ status: 500, code: "upstream_error", retryable: true, unparsed: true, message: "parse failed" });
    const ups = new Map<Target, Upstream>([[a, new FakeUpstream("a", [refused], { generationPrompt: "<think>", events: [text("raw"), finish()] })]]);
    const started = await attemptTargets([a], options(ups));
    expect(started.raw).toEqual({ generationPrompt: "<think>" });
    expect(started.first).toEqual(text("raw"));
    expect(started.attempts).toBe(2);
  });

  it("a target that places by prompt gets the prompt's chain of hashes and its low token estimate; a server does not", async () => {
    const [s, b] = [llama(), browser()];
    const server = new FakeUpstream("s", []);
    const page = new FakeUpstream("b", [[text("from the page"), finish()]]);
    const started = await attemptTargets([s, b], options(new Map<Target, Upstream>([[s, server], [b, page]])));
    expect(started.target).toBe(b);
    expect(server.opened[0]!.promptChain).toBeUndefined();
    expect(page.opened[0]!.promptChain?.length).toBeGreaterThan(0);
    expect(page.opened[0]!.promptTokens).toBeGreaterThan(0);
  });

  it("every target failing throws the final error with the attempts and each target's outcome", async () => {
    const a = llama();
    const bad = new ProxyError({ status: 400, code: "invalid_request_error", retryable: false, message: "no" });
    const err = await attemptTargets([a], options(new Map<Target, Upstream>([[a, new FakeUpstream("a", [bad])]]))).catch((e: ProxyError) => e);
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).attempts).toBe(1);
    expect((err as ProxyError).outcomes?.length).toBe(1);
  });
});
