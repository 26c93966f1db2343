// CPU cost of rewriting one streamed response of about 1,000 tokens (deltas of 1–8 characters,
// about 4 characters per token): reasoning, prose, two calls, more prose.

// The same answer, tools and delta split as the proxy-overhead benchmark's upstream.
import { TOOLS, splitDeltas as split, toolText as sampleResponse } from "../overhead/upstream.mjs";

/**
 * @param {import("./build-engine.mjs").Engine} engine
 * @param {boolean} quick
 */
export function measureStreaming(engine, quick) {
  const text = sampleResponse();
  const tokens = Math.round(text.length / 4);
  const chunked = split(text, 7);
  const perChar = [...text];
  const runs = quick ? 200 : 2000;
  const time = (/** @type {string[]} */ chunks) => {
    for (let i = 0; i < 100; i++) {
      const rw = new engine.ToolCallStreamRewriter(TOOLS);
      for (const c of chunks) rw.push(c);
      rw.flush();
    }
    const samples = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const rw = new engine.ToolCallStreamRewriter(TOOLS);
      for (const c of chunks) rw.push(c);
      rw.flush();
      samples.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    samples.sort((a, b) => a - b);
    const scale = 1000 / tokens;
    return {
      cpuMs: ((cpu.user + cpu.system) / 1000 / runs) * scale,
      p50: samples[Math.floor(runs / 2)] * scale,
      p99: samples[Math.floor(runs * 0.99)] * scale,
    };
  };
  const tokenDeltas = time(chunked);
  const charDeltas = time(perChar);
  const f = (/** @type {number} */ x) => x.toFixed(3);
  return {
    figures: { tokens, chars: text.length, deltas: chunked.length, tokenDeltas, charDeltas },
    lines: [
      `Streaming, per 1,000-token response (${text.length} chars ≈ ${tokens} tokens; rescaled to 1,000):`,
      `  deltas of 1–8 chars (${chunked.length} pushes): CPU ${f(tokenDeltas.cpuMs)} ms; wall p50 ${f(tokenDeltas.p50)} ms, p99 ${f(tokenDeltas.p99)} ms`,
      `  one char per delta (${perChar.length} pushes):  CPU ${f(charDeltas.cpuMs)} ms; wall p50 ${f(charDeltas.p50)} ms, p99 ${f(charDeltas.p99)} ms`,
    ],
  };
}
