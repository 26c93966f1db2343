// CPU cost of rewriting one streamed response of about 1,000 tokens (deltas of 1–8 characters,
// about 4 characters per token): reasoning, prose, two calls, more prose.

function sampleResponse() {
  const reasoning = "The user wants the weather in two cities and the local time. ".repeat(20);
  const prose = "Here is what I found so far: the forecast models disagree a little, {so} I will check <b>both</b> sources [1]. ".repeat(12);
  const call = (city) => `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}", "days": 3, "metric": true}}\n</tool_call>`;
  return `<think>\n${reasoning}\n</think>\n\n${prose}\n${call("Paris")}\n${call("Berlin")}\n${prose}`;
}

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" }, metric: { type: "boolean" } }, required: ["city"] },
    },
  },
];

function split(text, seed) {
  const chunks = [];
  let s = seed >>> 0;
  for (let i = 0; i < text.length; ) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = 1 + (s >>> 29);
    chunks.push(text.slice(i, i + n));
    i += n;
  }
  return chunks;
}

export function measureStreaming(engine, quick) {
  const text = sampleResponse();
  const tokens = Math.round(text.length / 4);
  const chunked = split(text, 7);
  const perChar = [...text];
  const runs = quick ? 200 : 2000;
  const time = (chunks) => {
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
  const f = (x) => x.toFixed(3);
  return {
    figures: { tokens, chars: text.length, deltas: chunked.length, tokenDeltas, charDeltas },
    lines: [
      `Streaming, per 1,000-token response (${text.length} chars ≈ ${tokens} tokens; rescaled to 1,000):`,
      `  deltas of 1–8 chars (${chunked.length} pushes): CPU ${f(tokenDeltas.cpuMs)} ms; wall p50 ${f(tokenDeltas.p50)} ms, p99 ${f(tokenDeltas.p99)} ms`,
      `  one char per delta (${perChar.length} pushes):  CPU ${f(charDeltas.cpuMs)} ms; wall p50 ${f(charDeltas.p50)} ms, p99 ${f(charDeltas.p99)} ms`,
    ],
  };
}
