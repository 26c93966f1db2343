// The health hub's recovery watch (docs/reliability.md, "Health"): a server found loading or down is
// sampled every 250 ms and isolates refresh their copy of the hub's snapshot as often, so a server
// that comes back serves within a fraction of a second, not a sample period plus a snapshot's life.
// The snapshot's life here is 6 s, so that only the watch can explain a quick rejoin.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { upstreamKey } from "../../src/health/upstream-health.ts";
import { FIXTURE_URL, call, configWith } from "./harness.ts";

const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const hub = () => (env as unknown as Env).HEALTH_HUB.getByName("health");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a server coming back", () => {
  it("is watched every 250 ms while loading, and serves within a fraction of a second of its /health answering", { timeout: 30_000 }, async () => {
    const t0 = Date.now();
    const backAt = t0 + 8000;
    const coming = `${FIXTURE_URL}/u-rec${tag}/behave/loading-until/${backAt}`;
    const other = `${FIXTURE_URL}/u-oth${tag}/behave/say/other`;
    const vars = configWith(
      { rec: { targets: [{ kind: "llama", url: coming }, { kind: "llama", url: other }] } },
      { health: { sampleMs: 1000, snapshotTtlMs: 6000 } },
    );
    // Each request's reports leave in its waitUntil up to snapshotTtlMs later: waited for at the end.
    const pending: Array<() => Promise<unknown>> = [];
    const ask = async () => {
      const { res, done } = await call("/v1/chat/completions", { json: { model: "rec", messages: [{ role: "user", content: `hi ${tag}` }] } }, vars);
      const body = await res.text();
      pending.push(done);
      expect(res.status, body).toBe(200);
      return { text: JSON.parse(body).choices[0].message.content as string, at: Date.now() };
    };

    // While it loads, the other server answers, and the hub watches the loading one.
    let watched: number | undefined;
    while (Date.now() < backAt - 200) {
      expect((await ask()).text).toBe("other");
      if (watched === undefined) {
        const s = await hub().snapshot();
        if (s.upstreams[upstreamKey(coming)]?.state === "loading") {
          expect(s.recheckMs).toBe(250);
          watched = Date.now();
        }
      }
      await sleep(200);
    }
    expect(watched, "the hub never saw the server loading").toBeDefined();

    // Back: the first request after the isolate's copy shows it ready is served there.
    let back: number | undefined;
    while (back === undefined && Date.now() < backAt + 6000) {
      const r = await ask();
      if (r.text === "back") back = r.at;
      else await sleep(50);
    }
    expect(back, "never served by the server that came back").toBeDefined();
    expect(back! - backAt).toBeLessThan(1500);

    // The watch was a tick of 250 ms (the sample period is 1 s), and it ends once the server is ready.
    const probes = (await (await fetch(`${FIXTURE_URL}/_probes`)).json()) as Array<{ path: string; at: number }>;
    const watching = probes.filter((p) => p.path.endsWith(`/loading-until/${backAt}/health`) && p.at > watched! && p.at < backAt);
    expect(watching.length / ((backAt - watched!) / 1000)).toBeGreaterThan(2.5);
    const after = await hub().snapshot();
    expect(after.recheckMs).toBeUndefined();
    // Loading, then ready: a restart, after the last sample that found it loading (placement forgets
    // what it held before). The server that stayed up did not restart.
    expect(after.upstreams[upstreamKey(coming)]?.restartedAt).toBeGreaterThan(watched!);
    expect(after.upstreams[upstreamKey(coming)]?.restartedAt).toBeLessThan(backAt);
    expect(after.upstreams[upstreamKey(other)]?.restartedAt).toBeUndefined();
    for (const done of pending) await done();
  });
});
