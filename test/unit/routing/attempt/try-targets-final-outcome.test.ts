import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig, type Config } from "../../../../src/config/config.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { resetHealthCache } from "../../../../src/health/health-client.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { tryTargets, type TryOptions } from "../../../../src/routing/attempt/try-targets.ts";
import { rejection } from "./rejection.ts";

// tryTargets' final error when every target fails: one precedence, whatever the order of the
// targets and the state of their circuits (src/routing/attempt/final-outcome.ts).

const parsed = parseConfig({ SWITCHYARD_ENV: "dev" });
if (!parsed.ok) throw new Error("default config");
const config: Config = { ...parsed.config, retries: { ...parsed.config.retries, backoffMs: 1, maxBackoffMs: 2, maxRetryAfterMs: 0 } };

let n = 0;
const llama = (): Target & { kind: "llama" } => ({ kind: "llama", url: `http://10.1.0.${++n}:8080`, name: `llama:10.1.0.${n}:8080` });
const browser = (implicit = false): Target => ({ kind: "browser", model: "Qwen-x", name: "browser:Qwen-x", ...(implicit ? { implicit } : {}) });
const opts = (more: Partial<TryOptions> = {}): TryOptions => ({ config, env: {}, model: "m", signal: new AbortController().signal, ...more });

const unreachable = (t: Target) => new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: `${t.name} refused the connection` });
const noSession = (t: Target) => new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: `No browser session is serving ${t.name}.` });

describe("tryTargets: the final error", () => {
  beforeEach(() => resetHealthCache());

  it("a dead llama, then a declared browser with no session: 503 no_capacity with Retry-After before and after the llama's circuit opens", async () => {
    const dead = llama();
    const targets = [dead, browser()];
    const orders: string[] = [];
    for (let i = 0; i < config.circuit.failureThreshold + 3; i++) {
      const order: string[] = [];
      const err = await rejection(
        tryTargets(targets, opts(), async (t) => {
          order.push(t.kind);
          throw t.kind === "llama" ? unreachable(t) : noSession(t);
        }),
      );
      orders.push(order.join(","));
      expect(err).toMatchObject({ status: 503, code: "no_capacity", retryAfter: 5, attempts: 2 });
      expect(err.outcomes).toEqual(
        order.map((kind) => (kind === "llama" ? { target: dead.name, code: "upstream_unreachable", status: 502 } : { target: "browser:Qwen-x", code: "no_capacity", status: 503 })),
      );
    }
    // The circuit did open (the llama went last): the answer did not change with it.
    expect(orders[0]).toBe("llama,browser");
    expect(orders.at(-1)).toBe("browser,llama");
  });

  it("zero config's implicit browser fallback never hides why the server failed, whichever was tried last", async () => {
    const dead = llama();
    const targets = [dead, browser(true)];
    const codes: string[] = [];
    for (let i = 0; i < config.circuit.failureThreshold + 2; i++) {
      const err = await rejection(tryTargets(targets, opts(), async (t) => Promise.reject(t.kind === "llama" ? unreachable(t) : noSession(t))));
      codes.push(err.code);
      expect(err.message).toContain(dead.name);
    }
    expect(new Set(codes)).toEqual(new Set(["upstream_unreachable"]));
  });

  it("a browser session's 413 is the client's: it does not stop failover, but a later failure does not hide it", async () => {
    const seen: string[] = [];
    const err = await rejection(
      tryTargets([browser(), llama()], opts(), async (t) => {
        seen.push(t.kind);
        throw t.kind === "browser" ? new ProxyError({ status: 413, code: "request_too_large", retryable: true, message: "too large for a browser session" }) : unreachable(t);
      }),
    );
    expect(seen).toEqual(["browser", "llama"]);
    expect(err).toMatchObject({ status: 413, code: "request_too_large", attempts: 2 });
  });

  it("model_loading and a full queue are not turned into the 502 of a target tried after them", async () => {
    const loading = llama();
    const err = await rejection(
      tryTargets([loading, llama()], opts(), async (t) =>
        Promise.reject(t === loading ? new ProxyError({ status: 503, code: "model_loading", retryAfter: 5, retryable: true, message: "loading" }) : unreachable(t)),
      ),
    );
    expect(err).toMatchObject({ status: 503, code: "model_loading", retryAfter: 5 });
    const full = await rejection(
      tryTargets([browser(), llama()], opts(), async (t) =>
        Promise.reject(t.kind === "browser" ? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, message: "every session is busy" }) : unreachable(t)),
      ),
    );
    expect(full).toMatchObject({ status: 503, code: "no_capacity", retryAfter: 2 });
  });

  it("a timeout beats an unreachable server in either order", async () => {
    for (const timeoutFirst of [true, false]) {
      const [a, b] = [llama(), llama()];
      const slow = timeoutFirst ? a : b;
      const err = await rejection(
        tryTargets([a, b], opts(), async (t) => Promise.reject(t === slow ? new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: "slow" }) : unreachable(t))),
      );
      expect(err.code).toBe("upstream_timeout");
    }
  });

  it("a client mistake still stops at once, and carries the outcomes so far", async () => {
    const [a, b, c] = [llama(), llama(), llama()];
    const seen: Target[] = [];
    const err = await rejection(
      tryTargets([a, b, c], opts(), async (t) => {
        seen.push(t);
        throw t === a ? unreachable(t) : new ProxyError({ status: 400, code: "context_length_exceeded", message: "too long" });
      }),
    );
    expect(seen).toEqual([a, b]);
    expect(err).toMatchObject({ status: 400, code: "context_length_exceeded", attempts: 2 });
    expect(err.outcomes?.map((o) => o.code)).toEqual(["upstream_unreachable", "context_length_exceeded"]);
  });

  it("a skipped target is listed but not counted, and answers only when nothing was tried", async () => {
    class Unable extends ProxyError {}
    const dead = llama();
    const err = await rejection(
      tryTargets([browser(), dead], opts({ skips: (e) => e instanceof Unable }), async (t) =>
        Promise.reject(t.kind === "browser" ? new Unable({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: "no embedding session" }) : unreachable(t)),
      ),
    );
    expect(err).toMatchObject({ code: "upstream_unreachable", attempts: 1 });
    expect(err.outcomes).toEqual([
      { target: "browser:Qwen-x", code: "no_capacity", status: 503, skipped: true },
      { target: dead.name, code: "upstream_unreachable", status: 502 },
    ]);
  });

  it("a target retried lists its last code once", async () => {
    const flaky = llama();
    let calls = 0;
    const err = await rejection(
      tryTargets([flaky], opts(), async () => {
        calls++;
        throw calls === 1 ? new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: "500" }) : unreachable(flaky);
      }),
    );
    expect(err.attempts).toBe(2);
    expect(err.outcomes).toEqual([{ target: flaky.name, code: "upstream_unreachable", status: 502 }]);
  });
});
