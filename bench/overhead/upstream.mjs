// A fast local upstream that speaks llama-server's protocol (the subset the proxies use), for the
// proxy-overhead benchmark. The first path segment picks the behaviour; the proxies append their own
// `/v1/chat/completions` to a base URL that includes it:
//   /fast/…      a short answer (16 tokens): JSON, or a stream written at once
//   /paced-<ms>/… `tok<i>` frames <ms> apart; each frame's write time is kept under `<last user message>:<i>`
//   /flood-<n>/…  <n> content frames written as fast as the socket takes them (the 1,000-token text
//                with reasoning, prose and two tool calls written as text, when the request has tools)
//   GET …/props, …/health, …/slots as llama-server answers them.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const ID = "chatcmpl-bench";

const frame = (/** @type {Record<string, unknown>} */ delta, /** @type {string | null} */ finish = null) =>
  `data: {"choices":[{"finish_reason":${finish ? `"${finish}"` : "null"},"index":0,"delta":${JSON.stringify(delta)}}],"created":1796022686,"id":"${ID}","model":"m","system_fingerprint":"b1-bench","object":"chat.completion.chunk"}\n\n`;
const usageFrame = (/** @type {number} */ n) => `data: {"choices":[],"created":1796022686,"id":"${ID}","model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":${n},"prompt_tokens":12,"total_tokens":${n + 12}},"timings":{"prompt_n":12,"predicted_n":${n}}}\n\n`;

/** About 1,000 tokens: reasoning, prose, two calls written as text, prose (also bench/toolcalls/throughput.mjs's). */
export function toolText() {
  const reasoning = "The user wants the weather in two cities and the local time. ".repeat(20);
  const prose = "Here is what I found so far: the forecast models disagree a little, {so} I will check <b>both</b> sources [1]. ".repeat(12);
  const call = (/** @type {string} */ city) => `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}", "days": 3, "metric": true}}\n</tool_call>`;
  return `<think>\n${reasoning}\n</think>\n\n${prose}\n${call("Paris")}\n${call("Berlin")}\n${prose}`;
}

/** @type {import("../../src/toolcalls/index.ts").ToolDefinition[]} */
export const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" }, metric: { type: "boolean" } }, required: ["city"] },
    },
  },
];

/**
 * `text` in deltas of 1–8 characters (about 4 per token), deterministic.
 * @param {string} text
 */
export function splitDeltas(text, seed = 7) {
  const out = [];
  let s = seed >>> 0;
  for (let i = 0; i < text.length; ) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = 1 + (s >>> 29);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/**
 * The SSE text of a whole stream of content deltas (role frame, deltas, finish, usage, [DONE]).
 * @param {string[]} deltas
 */
export function sseOf(deltas) {
  return [frame({ role: "assistant", content: null }), ...deltas.map((d) => frame({ content: d })), frame({}, "stop"), usageFrame(deltas.length), "data: [DONE]\n\n"];
}

const FAST = Array.from({ length: 16 }, (_, i) => `tok${i} `);
const FAST_SSE = sseOf(FAST).join("");
const FAST_JSON = JSON.stringify({
  choices: [{ finish_reason: "stop", index: 0, message: { role: "assistant", content: FAST.join("") } }],
  created: 1796022686, id: ID, model: "m", object: "chat.completion",
  usage: { completion_tokens: 16, prompt_tokens: 12, total_tokens: 28 },
});
const TOOL_DELTAS = splitDeltas(toolText());

/**
 * Writes `parts` respecting back-pressure (as fast as the reader takes them).
 * @param {import("node:http").ServerResponse} res
 * @param {string[]} parts
 */
async function writeAll(res, parts) {
  for (const p of parts) if (!res.write(p)) await new Promise((r) => res.once("drain", r));
  res.end();
}

/** Each span of an OTLP/JSON export has one (a parent's id is under "parentSpanId"). */
const SPAN_KEY = Buffer.from('"spanId":');

/** @returns {Promise<{ port: number, sentAt: Map<string, number>, spans: { count: number }, close(): Promise<void> }>} */
export function startBenchUpstream() {
  /** Spans received at `/otlp/v1/traces`. */
  const spans = { count: 0 };
  /**
   * `<key>:<i>` → performance.now() when paced frame i of the request keyed `key` was written.
   * @type {Map<string, number>}
   */
  const sentAt = new Map();
  const server = createServer(async (req, res) => {
    const url = req.url ?? "/";
    const [, mode = ""] = url.split("/");
    if (req.method === "GET") {
      if (url.endsWith("/props")) return res.writeHead(200, { "content-type": "application/json" }).end('{"chat_template_caps":{"supports_tool_calls":true}}');
      if (url.endsWith("/slots")) return res.writeHead(200, { "content-type": "application/json" }).end('[{"id":0,"is_processing":false}]');
      return res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    }
    /** @type {Buffer[]} */
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (mode === "otlp") {
      // An OTLP/HTTP JSON receiver (`ab.mjs cpu --otlp`): counts the spans by their `"spanId":` keys
      // without parsing the body (this process is also the bench's client: a parse of each export
      // would hold up the client's reads of the builds' answers), answers as a collector does.
      const text = Buffer.concat(chunks);
      for (let i = text.indexOf(SPAN_KEY); i >= 0; i = text.indexOf(SPAN_KEY, i + SPAN_KEY.length)) spans.count++;
      return res.writeHead(200, { "content-type": "application/json" }).end("{}");
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const stream = body.stream === true;
    if (mode === "fast") {
      if (!stream) return res.writeHead(200, { "content-type": "application/json" }).end(FAST_JSON);
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(FAST_SSE);
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (mode.startsWith("paced-")) {
      const gap = Number(mode.slice(6));
      const key = body.messages.at(-1).content;
      const n = body.max_tokens ?? 20;
      let closed = false;
      res.on("close", () => (closed = true));
      res.write(frame({ role: "assistant", content: null }));
      for (let i = 0; i < n && !closed; i++) {
        await sleep(gap);
        sentAt.set(`${key}:${i}`, performance.now());
        res.write(frame({ content: `tok${i} ` }));
      }
      res.write(frame({}, "stop"));
      res.write(usageFrame(n));
      return res.end("data: [DONE]\n\n");
    }
    if (mode.startsWith("flood-")) {
      const n = Number(mode.slice(6));
      const deltas = body.tools?.length ? TOOL_DELTAS.slice(0, n) : Array.from({ length: n }, (_, i) => `tok${i} `);
      return writeAll(res, sseOf(deltas));
    }
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      resolve({ port, sentAt, spans, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) });
    }),
  );
}
