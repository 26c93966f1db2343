import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig, type Config } from "../../../../src/config/config.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { resetHealthCache } from "../../../../src/health/health-client.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { tryTargets, type TryOptions } from "../../../../src/routing/attempt/try-targets.ts";
import { rejection } from "./rejection.ts";

class Unable extends ProxyError {}

const parsed = parseConfig({ SWITCHYARD_ENV: "dev" });
if (!parsed.ok) throw new Error("default config");
const config: Config = { ...parsed.config, retries: { ...parsed.config.retries, backoffMs: 1, maxBackoffMs: 2 } };

let n = 0;
const llama = (): Target => ({ kind: "llama", url: `http://10.0.0.${++n}:8080`, name: `llama:10.0.0.${n}:8080` });
const browser = (): Target => ({ kind: "browser", model: "x", name: "browser:x" });
const opts = (more: Partial<TryOptions> = {}): TryOptions => ({ config, env: {}, model: "m", signal: new AbortController().signal, skips: (e) => e instanceof Unable, ...more });

const unreachable = (t: Target) => new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: `${t.name} refused` });
const unable = () => new Unable({ status: 503, code: "no_capacity", retryable: true, message: "no session" });

describe("tryTargets", () => {
  beforeEach(() => resetHealthCache());

  it("returns the first success with every try counted, same-target retries included", async () => {
    const a = llama();
    let calls = 0;
    const tried = await tryTargets([a], opts(), async () => {
      if (++calls === 1) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: "500 once" });
      return "body";
    });
    expect(tried).toMatchObject({ target: a, attempts: 2, value: "body" });
  });

  it("a skipped target is not counted and never masks the error of a target that was tried", async () => {
    const a = llama();
    const err = await rejection(tryTargets([a, browser()], opts(), async (t) => Promise.reject(t.kind === "llama" ? unreachable(t) : unable())));
    expect(err.code).toBe("upstream_unreachable");
    expect(err.attempts).toBe(1);
  });

  it("only skipped targets: the skip's own error, with no attempt", async () => {
    const err = await rejection(tryTargets([browser()], opts(), async () => Promise.reject(unable())));
    expect(err).toBeInstanceOf(Unable);
    expect(err.attempts).toBe(0);
  });

  it("a skip before a success costs no attempt", async () => {
    const a = llama();
    const tried = await tryTargets([browser(), a], opts(), async (t) => (t.kind === "browser" ? Promise.reject(unable()) : "ok"));
    expect(tried).toMatchObject({ target: a, attempts: 1 });
  });

  it("without `skips`, the same failure is an attempt like any other", async () => {
    const err = await rejection(tryTargets([browser()], opts({ skips: undefined }), async () => Promise.reject(unable())));
    expect(err.attempts).toBe(1);
  });

  it("a client mistake is thrown at once: no retry, no next target", async () => {
    const seen: string[] = [];
    const err = await rejection(
      tryTargets([llama(), llama()], opts(), async (t) => {
        seen.push(t.name);
        throw new ProxyError({ status: 400, code: "invalid_value", message: "bad input" });
      }),
    );
    expect(err.code).toBe("invalid_value");
    expect(seen).toHaveLength(1);
  });
});
