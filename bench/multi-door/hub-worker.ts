// A Worker for measuring the AdmissionHub alone in workerd (bench/multi-door/hub-ceiling.mjs): its
// fetch handler drives one hub instance with ask + end pairs, `c` at a time, and answers how many
// pairs a second the one object sustained and the latency of each pair as the calling Worker saw it.
// One fetch makes at most a few hundred pairs (a request's subrequests are bounded); the caller sends
// several at once for more.
import { AdmissionHub } from "../../src/routing/admission/admission-hub.ts";

export { AdmissionHub };

interface Env {
  ADMISSION_HUB: DurableObjectNamespace<AdmissionHub>;
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    const n = Number(url.searchParams.get("n") ?? 2000);
    const c = Number(url.searchParams.get("c") ?? 1);
    const slots = Number(url.searchParams.get("slots") ?? 1_000_000);
    const hub = env.ADMISSION_HUB.getByName(url.searchParams.get("name") ?? "bench");
    const servers = ["http://a", "http://b"];
    const lat: number[] = [];
    let next = 0;
    const started = performance.now();
    const worker = async (w: number) => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        const id = `${w}:${i}:${Math.random()}`;
        const reply = await hub.ask({ id, model: "m", key: `k${i % 8}`, priority: 0, plan: servers, slots: { "http://a": slots, "http://b": slots }, conversation: null });
        if (!("server" in reply)) throw new Error(`queued with ${slots} slots: ${JSON.stringify(reply)}`);
        await hub.end(id);
        lat.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: c }, (_, w) => worker(w)));
    // workerd's clock advances only across I/O: the DO calls are I/O, so the span is real.
    const ms = performance.now() - started;
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
    return Response.json({ n, c, ms, pairsPerSecond: (n / ms) * 1000, p50: q(0.5), p99: q(0.99), lat });
  },
};
