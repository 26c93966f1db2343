// A session that said a model is not loaded is kept off that model's requests, for a time that
// doubles each time it says so again (src/upstreams/browser/loading-bench.ts).
import { describe, expect, it } from "vitest";
import { BENCH_FIRST_MS, BENCH_MAX_MS, LoadingBench } from "../../../../src/upstreams/browser/loading-bench.ts";

describe("LoadingBench", () => {
  it("benches a session for one model: 1 s, then doubling, capped", () => {
    const bench = new LoadingBench();
    expect(bench.strike("s1", "m", 0)).toBe(BENCH_FIRST_MS);
    expect(bench.until("s1", "m", 500)).toBe(BENCH_FIRST_MS);
    expect(bench.until("s1", "other", 500)).toBeUndefined();
    expect(bench.until("s2", "m", 500)).toBeUndefined();
    expect(bench.until("s1", "m", BENCH_FIRST_MS)).toBeUndefined();
    expect(bench.strike("s1", "m", 10_000)).toBe(10_000 + 2 * BENCH_FIRST_MS);
    expect(bench.strike("s1", "m", 20_000)).toBe(20_000 + 4 * BENCH_FIRST_MS);
    for (let i = 0; i < 10; i++) bench.strike("s1", "m", 100_000);
    expect(bench.strike("s1", "m", 100_000)).toBe(100_000 + BENCH_MAX_MS);
  });

  it("a session that served the model starts again from 1 s; a session gone is forgotten", () => {
    const bench = new LoadingBench();
    bench.strike("s1", "m", 0);
    bench.strike("s1", "m", 0);
    bench.served("s1", "m");
    expect(bench.until("s1", "m", 0)).toBeUndefined();
    expect(bench.strike("s1", "m", 0)).toBe(BENCH_FIRST_MS);
    bench.strike("s2", "m", 0);
    bench.forget("s1");
    expect(bench.until("s1", "m", 0)).toBeUndefined();
    expect(bench.until("s2", "m", 0)).toBe(BENCH_FIRST_MS);
  });
});
