#!/usr/bin/env node
// Re-records the *recorded* fixtures in test/fixtures/llama/ against the real llama-server and the
// tiny test model (run `node scripts/pretest.mjs` first). The hand-written fixtures are left alone.
//
//   npx node scripts/record-llama-fixtures.mjs [name…]
//
// Each fixture is the upstream HTTP response body exactly as received (raw bytes, after HTTP
// chunked-transfer decoding; no content decoding is requested) in NAME.sse (event streams) or
// NAME.body.json (JSON bodies), plus NAME.json with the status, content type, request and purpose.
import { request as httpRequest } from "node:http";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { literalGrammar, startLlamaServer } from "../test/support/llama-server.mjs";
import { llamaCache } from "./llama-cache.mjs";

/**
 * @typedef {import("../test/support/llama-server.mjs").LlamaServer} LlamaServer
 * @typedef {{ method: string, path: string, body?: unknown, raw?: string, headers?: Record<string, string> }} FixtureRequest
 * @typedef {{ name: string, server?: ServerKind, request: FixtureRequest | ((url: string) => Promise<FixtureRequest>), headers?: Record<string, string>, reproduces: string }} Fixture
 * @typedef {"main" | "small" | "auth" | "loading" | "harmony"} ServerKind
 * @typedef {{ status: number | undefined, headers: import("node:http").IncomingHttpHeaders, body: Buffer }} RawResponse
 * @typedef {Fixture & { request: FixtureRequest }} PreparedFixture
 */

const DIR = join(dirname(fileURLToPath(import.meta.url)), "../test/fixtures/llama");
/** Responses carry the alias instead of the model's local path. */
export const FIXTURE_MODEL_ALIAS = "switchyard-tiny";
const ARGS = ["--alias", FIXTURE_MODEL_ALIAS];

const USER = [{ role: "user", content: "Say the text." }];
const literal = (/** @type {string} */ text, extra = {}) => ({
  messages: USER,
  grammar: literalGrammar(text),
  temperature: 0,
  max_tokens: 200,
  ...extra,
});
const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
/**
 * @param {unknown} body
 * @param {string} [raw] the body's exact bytes instead (malformed JSON)
 * @returns {FixtureRequest}
 */
const chat = (body, raw) => ({ method: "POST", path: "/v1/chat/completions", body, raw });

// gpt-oss's harmony template: its parser refuses any output without harmony's channel markup, which
// is all the random model writes; its raw text is what a raw completion of its prompt returns.
const HARMONY_CHAT = { messages: [{ role: "user", content: "Read a.txt." }], tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object", properties: { filepath: { type: "string" } }, required: ["filepath"] } } }] };
const HARMONY_CALL = '<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"filepath": "a.txt"}<|call|>';
/** @param {Record<string, unknown>} body */
const applyTemplate = (body) => ({ method: "POST", path: "/apply-template", body });

/**
 * The recorded fixtures: which server, which request, what the recording reproduces.
 * @type {Fixture[]}
 */
export const RECORDED = [
  {
    name: "stream-plain-text",
    request: chat(literal("Hello from Switchyard!", { stream: true, stream_options: { include_usage: true } })),
    reproduces:
      "A normal stream: first chunk delta {role:assistant, content:null}, content deltas, finish chunk delta {} with finish_reason stop, usage chunk with choices [] and timings, data: [DONE].",
  },
  {
    name: "stream-non-ascii",
    request: chat(literal("Grüße, 世界 👋", { stream: true, stream_options: { include_usage: true } })),
    reproduces:
      "Multi-byte UTF-8 (umlaut, CJK, emoji) in content deltas; the server only emits complete UTF-8 sequences per delta.",
  },
  {
    name: "stream-logprobs",
    request: chat(literal("Hi there.", { logprobs: true, top_logprobs: 2, stream: true, stream_options: { include_usage: true } })),
    reproduces:
      "logprobs: true with top_logprobs: 2 on a stream: every content chunk carries choices[0].logprobs.content with that chunk's token entries ({id, token, bytes, logprob, top_logprobs}); the finish and usage chunks carry none (and the end-of-generation token gets no entry).",
  },
  {
    name: "stream-tool-call-literal",
    request: chat(
      literal('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', {
        stream: true,
        stream_options: { include_usage: true },
      }),
    ),
    reproduces:
      "Hermes-style <tool_call> markup streamed as plain content in small pieces (no tools in the request, so the server does not parse it): input for Switchyard's own tool-call extraction.",
  },
  {
    name: "stream-length-cutoff",
    request: chat(
      literal("This sentence is longer than the token budget allows.", {
        stream: true,
        max_tokens: 4,
        stream_options: { include_usage: true },
      }),
    ),
    reproduces: "max_tokens smaller than the output: finish_reason length after 4 tokens, then usage and [DONE].",
  },
  {
    name: "nonstream-plain-text",
    request: chat(literal("Hello from Switchyard!")),
    reproduces: "A normal non-stream chat.completion with usage and timings; finish_reason stop.",
  },
  {
    name: "stream-midstream-error-no-done",
    request: chat({ messages: USER, temperature: 0, max_tokens: 100, stream: true }),
    reproduces:
      "Current builds' mid-stream error: unconstrained junk from the random model streams as content, then the final parse fails and the stream ends with data: {\"error\":{code 500, server_error, \"The model produced output that does not match the expected peg-native format\"}} and NO data: [DONE] (no finish chunk either).",
  },
  {
    name: "error-peg-parse-500",
    request: chat({ messages: USER, temperature: 0, max_tokens: 100 }),
    reproduces:
      "The same unparsable output without streaming: HTTP 500 server_error `The model produced output that does not match the expected peg-native format` instead of a completion.",
  },
  {
    name: "harmony-unparsed-stream",
    server: "harmony",
    request: chat({ ...HARMONY_CHAT, temperature: 0, max_tokens: 10, stream: true, stream_options: { include_usage: true } }),
    reproduces:
      "gpt-oss's template with tools: the random model's output has no harmony channel markup, so the final parse fails before any of it was sent: the role chunk, then data: {\"error\":{code 500, server_error, \"The model produced output that does not match the expected peg-native format\"}}, no [DONE].",
  },
  {
    name: "harmony-unparsed-500",
    server: "harmony",
    request: chat({ ...HARMONY_CHAT, temperature: 0, max_tokens: 10 }),
    reproduces: "The same without streaming: HTTP 500 server_error `The model produced output that does not match the expected peg-native format`.",
  },
  {
    name: "harmony-apply-template",
    server: "harmony",
    request: applyTemplate(HARMONY_CHAT),
    reproduces: "POST /apply-template: {prompt} rendered by the chat template, ending with the generation prompt `<|start|>assistant`.",
  },
  {
    name: "harmony-apply-template-no-generation-prompt",
    server: "harmony",
    request: applyTemplate({ ...HARMONY_CHAT, add_generation_prompt: false }),
    reproduces: "POST /apply-template with add_generation_prompt: false: the same prompt without `<|start|>assistant`.",
  },
  {
    name: "harmony-raw-tool-call",
    server: "harmony",
    request: async (url) => {
      const { prompt } = JSON.parse((await rawRequest(url, applyTemplate(HARMONY_CHAT))).body.toString("utf8"));
      return { method: "POST", path: "/v1/completions", body: { prompt, grammar: literalGrammar(HARMONY_CALL), temperature: 0, max_tokens: 200, preserved_tokens: ["<|channel|>", "<|message|>", "<|constrain|>", "<|call|>"], stream: true, stream_options: { include_usage: true } } };
    },
    reproduces:
      "POST /v1/completions of that prompt (a raw completion: no chat parser), the text forced to a harmony tool call: text chunks as written, markers included, a finish chunk with finish_reason stop, [DONE].",
  },
  {
    name: "error-context-exceeded",
    server: "small",
    request: chat({
      messages: [{ role: "user", content: "lorem ipsum dolor sit amet ".repeat(120) }],
      stream: true,
      max_tokens: 16,
    }),
    reproduces:
      "A prompt longer than the per-slot context (-c 256 -np 1) with stream:true: an ordinary 400 JSON body of type exceed_context_size_error with n_prompt_tokens and n_ctx, not an SSE stream.",
  },
  {
    name: "error-bad-grammar",
    request: chat({ messages: USER, grammar: "root ::= (", stream: true, max_tokens: 16 }),
    reproduces: "An unparsable GBNF grammar with stream:true: 400 invalid_request_error before any SSE.",
  },
  {
    name: "error-invalid-tool-choice",
    request: chat({ messages: USER, tools: [WEATHER_TOOL], tool_choice: "bogus", stream: true, max_tokens: 16 }),
    reproduces: "tool_choice other than auto/none/required: 400 invalid_request_error `Invalid tool_choice: bogus`.",
  },
  {
    name: "error-malformed-json-500",
    request: chat(undefined, '{"messages": [{"role": "user", "content": "hi"}'),
    reproduces:
      "A malformed JSON request body is answered 500 server_error (not 400) with the nlohmann parse error message: a client error that must not trigger failover.",
  },
  {
    name: "error-invalid-api-key-401",
    server: "auth",
    request: chat(literal("x"), undefined),
    headers: { authorization: "Bearer wrong-key" },
    reproduces: "Server started with --api-key and a wrong key: 401 authentication_error `Invalid API Key`.",
  },
  {
    name: "loading-503",
    server: "loading",
    request: chat(literal("x")),
    reproduces:
      "A request while the model is still loading: 503 unavailable_error `Loading model` (every route, before the API-key check).",
  },
];

/**
 * One HTTP request with node:http, returning the raw body bytes.
 * @param {string} base
 * @param {FixtureRequest} request
 * @returns {Promise<RawResponse>}
 */
export function rawRequest(base, { method, path, body, raw, headers = {} }) {
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, base),
      {
        method,
        agent: false, // a fresh connection per request (llama-server may close reused keep-alive sockets)
        headers: {
          ...(payload !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * The server's command line without machine-specific parts.
 * @param {LlamaServer} srv
 */
function serverFlags(srv) {
  return srv.argv.map((a, i, all) => (all[i - 1] === "-m" ? basename(a) : all[i - 1] === "--port" ? "<port>" : a));
}

/**
 * @param {PreparedFixture} fx
 * @param {RawResponse} res
 * @param {string} source
 * @param {LlamaServer} srv
 */
function save(fx, res, source, srv) {
  const contentType = res.headers["content-type"] ?? "";
  const bodyFile = `${fx.name}${contentType.startsWith("text/event-stream") ? ".sse" : ".body.json"}`;
  writeFileSync(join(DIR, bodyFile), res.body);
  const meta = {
    name: fx.name,
    body: bodyFile,
    status: res.status,
    content_type: contentType,
    reproduces: fx.reproduces,
    source,
    request: {
      method: fx.request.method,
      path: fx.request.path,
      ...(fx.headers ? { headers: fx.headers } : {}),
      ...(fx.request.raw !== undefined ? { raw_body: fx.request.raw } : { body: fx.request.body }),
    },
    server_flags: serverFlags(srv),
  };
  writeFileSync(join(DIR, `${fx.name}.json`), JSON.stringify(meta, null, 2) + "\n");
  console.log(`${fx.name}: ${res.status} ${contentType} ${res.body.length} bytes → ${bodyFile}`);
}

/** @type {Record<ServerKind, Parameters<typeof startLlamaServer>[0]>} */
const SERVER_ARGS = {
  main: { ctx: 2048, parallel: 4, args: ARGS },
  small: { ctx: 256, parallel: 1, args: ARGS },
  auth: { ctx: 512, parallel: 1, args: ARGS, apiKey: "right-key" },
  loading: { ctx: 2048, parallel: 4, args: ARGS },
  harmony: { ctx: 2048, parallel: 1, args: [...ARGS, "--jinja", "--chat-template-file", join(llamaCache().templates, "openai-gpt-oss-120b.jinja")] },
};

/** @param {string} url */
async function fingerprint(url) {
  const res = await rawRequest(url, chat(literal("x", { max_tokens: 1 })));
  return JSON.parse(res.body.toString("utf8")).system_fingerprint;
}

/**
 * Start a server without waiting and hammer it until the first HTTP answer arrives.
 * @param {PreparedFixture} fx
 * @param {string} source
 */
async function recordLoading(fx, source) {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const srv = await startLlamaServer({ ...SERVER_ARGS.loading, waitReady: false });
    try {
      for (;;) {
        let res;
        try {
          res = await rawRequest(srv.url, { ...fx.request, body: fx.request.body });
        } catch {
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        if (res.status === 503) {
          save(fx, res, source, srv);
          return true;
        }
        console.log(`loading-503: attempt ${attempt} missed the loading phase (got ${res.status})`);
        break;
      }
    } finally {
      await srv.stop();
    }
  }
  return false;
}

async function main() {
  mkdirSync(DIR, { recursive: true });
  const only = parseArgs({ allowPositionals: true }).positionals;
  const todo = RECORDED.filter((f) => !only.length || only.includes(f.name));
  /** @type {Partial<Record<ServerKind, LlamaServer>>} */
  const servers = {};
  try {
    for (const fx of todo) {
      const kind = fx.server ?? "main";
      if (kind === "loading") continue;
      servers[kind] ??= await startLlamaServer(SERVER_ARGS[kind]);
    }
    servers.main ??= await startLlamaServer(SERVER_ARGS.main);
    const fp = await fingerprint(servers.main.url);
    const source = `recorded from llama-server ${fp}`;
    for (const fx of todo) {
      const kind = fx.server ?? "main";
      if (kind === "loading") {
        if (!(await recordLoading(/** @type {PreparedFixture} */ (fx), source))) console.log(`loading-503: never caught the loading phase; ${existsSync(join(DIR, "loading-503.json")) ? "kept the existing fixture" : "no fixture written"}`);
        continue;
      }
      const srv = /** @type {LlamaServer} */ (servers[kind]);
      const request = typeof fx.request === "function" ? await fx.request(srv.url) : fx.request;
      const res = await rawRequest(srv.url, { ...request, headers: fx.headers });
      save({ ...fx, request }, res, source, srv);
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
