// A scriptable upstream that speaks llama-server's HTTP protocol, for what a real llama-server
// cannot be made to do on demand: replay recorded or hand-written streams byte for byte (optionally
// split into tiny chunks or paced), fail in specific ways, and report what it received and when each
// connection closed (to prove cancellation and header hygiene).
//
// Paths (the proxy appends /v1/chat/completions to a target's base URL):
//   /fixture/<name>[/bytes-<n>][/gap-<ms>]/v1/chat/completions   replay test/fixtures/llama/<name>.json's body
//   /behave/<kind>[/<arg>]/v1/chat/completions                     scripted behaviours (see BEHAVIOURS)
//   /behave/embed/v1/embeddings, /behave/busy-then-embed/<s>/…      embeddings (any behaviour answers
//                                                                  whatever the path's endpoint)
//   /u-<tag>/…                a leading u-<tag> segment is ignored: one upstream URL (so one health
//                             record and one circuit) per test
//   …/n_ctx-<n>/…             a segment after it: /slots reports slots of n_ctx <n> (a context window)
//   …/slots-<n>/…             a segment after those: /slots and /props report <n> slots (default 1)
//   …/no-slots/…              a segment after those: /slots answers 501, as llama-server with --no-slots
//   GET …/health, …/slots,    answered as llama-server does (503 while `loading`, else ok and one idle
//       …/metrics             slot; /metrics 501 as without --metrics), recorded in /_probes only (the
//                             health hub samples them)
//   POST …/tokenize           llama-server's answer shape, a token per 3 characters of `content`
//   GET /_requests            what was received (method, path, headers, body), newest last
//   GET /_probes              the health probes received
//   GET /_closed              request ids whose client connection closed, with times (the client's own,
//                             x-client-request-id, when it sent one; else Switchyard's x-request-id)
//   POST /_reset              forget both
import { createServer } from "node:http";
import { readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/llama");

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One chat.completion.chunk frame.
 * @param {string} id
 * @param {Record<string, unknown>} delta
 * @param {string | null} [finish]
 */
function chunk(id, delta, finish = null) {
  return `data: ${JSON.stringify({ choices: [{ finish_reason: finish, index: 0, delta }], created: 1796022686, id, model: "m", system_fingerprint: "b1-80fb11a", object: "chat.completion.chunk" })}\n\n`;
}

/**
 * A scripted behaviour: `arg` is the path segment after its name, `body` the request's, `counter` how
 * many requests this exact path has had (this one included).
 * @typedef {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, arg: string | undefined,
 *   state: { closed: boolean }, body: string, counter: number) => Promise<unknown>} Behaviour
 */

/**
 * Scripted behaviours: each gets (req, res, arg, state, body, counter).
 * @type {Record<string, Behaviour>}
 */
const BEHAVIOURS = {
  // Streams the URL-encoded text `arg` as content, a few characters per frame, then finishes.
  async say(req, res, arg) {
    const text = decodeURIComponent(arg ?? "");
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-say", { role: "assistant", content: null }));
    for (let i = 0; i < text.length; i += 5) res.write(chunk("chatcmpl-say", { content: text.slice(i, i + 5) }));
    res.write(chunk("chatcmpl-say", {}, "stop"));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: 5, prompt_tokens: 3, total_tokens: 8 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  },
  // Streams generated text too long for a URL (test/fuzz/hostile-inputs.test.ts): `arg` is the
  // URL-encoded JSON {parts: [[piece, times], …], frame}: each piece repeated, in frames of `frame`
  // characters (default 16). Without `arg`, that JSON is the last message's content (bench/hostile-inputs.mjs).
  async "say-repeat"(req, res, arg, state, body) {
    /** @type {Array<{ content?: unknown }>} */
    const messages = JSON.parse(body || "{}").messages ?? [];
    /** @type {{ parts?: Array<[string, number]>, frame?: number }} */
    const spec = JSON.parse(arg === undefined ? String(messages.at(-1)?.content ?? "{}") : decodeURIComponent(arg));
    const text = (spec.parts ?? []).map(([piece, times]) => piece.repeat(times)).join("");
    const frame = spec.frame ?? 16;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-repeat", { role: "assistant", content: null }));
    for (let i = 0; i < text.length && !state.closed; i += frame) res.write(chunk("chatcmpl-repeat", { content: text.slice(i, i + frame) }));
    res.write(chunk("chatcmpl-repeat", {}, "stop"));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: Math.ceil(text.length / 4), prompt_tokens: 3, total_tokens: 3 + Math.ceil(text.length / 4) } })}\n\n`);
    res.end("data: [DONE]\n\n");
  },
  // A server whose chat template allows a system message only first (Mistral Nemo's): a system message
  // after the conversation began gets the recorded refusal; otherwise it says `arg`, like `say`.
  async "system-first-template"(req, res, arg, state, body, counter) {
    let begun = false;
    /** @type {Array<{ role: string }>} */
    const messages = JSON.parse(body).messages ?? [];
    const late = messages.some((m) => (m.role === "system" ? begun : ((begun = true), false)));
    if (!late) return BEHAVIOURS.say(req, res, arg, state, body, counter);
    res.writeHead(400, { "content-type": "application/json; charset=utf-8", server: "llama.cpp" });
    res.end(readFileSync(join(FIXTURES, "error-template-late-system-400.body.json")));
  },
  // A server whose template cannot call tools (its /props says so): answers like `paced`.
  async "no-tool-template"(req, res, arg, state, body, counter) {
    return BEHAVIOURS.paced(req, res, arg, state, body, counter);
  },
  // Streams `arg` tokens ("tok0 tok1 …"), 20 ms apart, then finishes normally.
  async paced(req, res, arg, state) {
    const n = Number(arg ?? 10);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-paced", { role: "assistant", content: null }));
    for (let i = 0; i < n && !state.closed; i++) {
      res.write(chunk("chatcmpl-paced", { content: `tok${i} ` }));
      await sleep(20);
    }
    res.write(chunk("chatcmpl-paced", {}, "stop"));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: n, prompt_tokens: 3, total_tokens: n + 3 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  },
  // Sends one token, then nothing until the client leaves (or `arg` ms pass).
  async "stall-after-first"(req, res, arg, state) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-stall", { role: "assistant", content: null }));
    res.write(chunk("chatcmpl-stall", { content: "Hello" }));
    const until = Date.now() + Number(arg ?? 60_000);
    while (!state.closed && Date.now() < until) await sleep(20);
    res.end();
  },
  // Never sends headers (like llama-server while every slot is busy).
  async "stall-headers"(req, res, arg, state) {
    const until = Date.now() + Number(arg ?? 60_000);
    while (!state.closed && Date.now() < until) await sleep(20);
    res.destroy();
  },
  // Streams forever, one token every 50 ms, until the client leaves.
  async endless(req, res, arg, state) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; !state.closed; i++) {
      res.write(chunk("chatcmpl-endless", { content: `t${i} ` }));
      await sleep(50);
    }
    res.end();
  },
  // Streams forever as fast as the reader takes it (waiting on the socket's drain, as llama-server's
  // HTTP does), frames of `arg` characters (default 4096), until the client leaves.
  async flood(req, res, arg, state) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const frame = chunk("chatcmpl-flood", { content: "f".repeat(Number(arg ?? 4096)) });
    let wake = () => {};
    res.on("drain", () => wake()).on("close", () => wake());
    while (!state.closed) {
      if (!res.write(frame)) await new Promise((resolve) => (wake = () => resolve(undefined)));
    }
    res.end();
  },
  // Two tokens, then the TCP connection is reset mid-stream.
  async "reset-mid"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-reset", { role: "assistant", content: null }));
    res.write(chunk("chatcmpl-reset", { content: "Par" }));
    await sleep(30);
    req.socket.resetAndDestroy();
  },
  // An HTML error page, as a reverse proxy in front of llama-server would send.
  async "html-500"(req, res) {
    res.writeHead(500, { "content-type": "text/html" });
    res.end("<html><body><h1>500 Internal Server Error</h1></body></html>");
  },
  // llama-server while the model loads.
  async loading(req, res) {
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Loading model", type: "unavailable_error", code: 503 } }));
  },
  // Servers before streamed tool calls (llama.cpp PR #12379): tools + stream → 500; without stream, one body.
  async "tools-no-stream"(req, res, arg, state, body) {
    const parsed = JSON.parse(body);
    if (parsed.stream && parsed.tools) {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { code: 500, message: "Cannot use tools with stream", type: "server_error" } }));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(readFileSync(join(FIXTURES, "nonstream-native-tool-calls.body.json")));
  },
  // llama-server with --api-key when the proxy's key is wrong.
  async unauthorized(req, res) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Invalid API Key", type: "authentication_error", code: 401 } }));
  },
  // A --jinja llama-server continuing an answer (docs/reliability.md, measured): the whole answer is
  // the URL-encoded `arg`; a trailing assistant message that begins it is a prefill, echoed joined to
  // the first new piece, then the rest follows 5 characters a frame. Usage counts only what it made;
  // its prompt, 3 tokens and the prefill's (a token per 3 characters, as its /tokenize says).
  async continue(req, res, arg, state, body) {
    const text = decodeURIComponent(arg ?? "");
    /** @type {Array<{ role: string, content?: unknown }>} */
    const messages = JSON.parse(body).messages ?? [];
    const last = messages.at(-1);
    const prefill = last?.role === "assistant" && typeof last.content === "string" && text.startsWith(last.content) ? last.content : "";
    const rest = text.slice(prefill.length);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-continue", { role: "assistant", content: null }));
    let pieces = 0;
    for (let i = 0; i < rest.length; i += 5, pieces++) res.write(chunk("chatcmpl-continue", { content: (i === 0 ? prefill : "") + rest.slice(i, i + 5) }));
    if (!rest) res.write(chunk("chatcmpl-continue", { content: prefill }));
    res.write(chunk("chatcmpl-continue", {}, "stop"));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: pieces, prompt_tokens: 3 + Math.ceil(prefill.length / 3), total_tokens: 3 + Math.ceil(prefill.length / 3) + pieces } })}\n\n`);
    res.end("data: [DONE]\n\n");
  },
  // The URL-encoded `arg`, 5 characters a frame, then an in-stream error frame (llama-server's
  // `data: {"error": …}` mid-answer).
  async "error-frame-mid"(req, res, arg) {
    const text = decodeURIComponent(arg ?? "Half");
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < text.length; i += 5) res.write(chunk("chatcmpl-errmid", { content: text.slice(i, i + 5) }));
    await sleep(20);
    res.end(`data: ${JSON.stringify({ error: { code: 500, message: "Compute error.", type: "server_error" } })}\n\n`);
  },
  // A tool call begun (its name and half its arguments), then the connection reset.
  async "reset-mid-tool-call"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-resettool", { role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\": \"Par" } }] }));
    await sleep(30);
    req.socket.resetAndDestroy();
  },
  // ---- Faults for test/faults (added; the behaviours above are unchanged) ----
  // Accepts the request, then resets the connection without any response.
  async "reset-before"(req) {
    req.socket.resetAndDestroy();
  },
  // Headers, then nothing (no frame) until the client leaves or `arg` ms pass.
  async "stall-before-first"(req, res, arg, state) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    const until = Date.now() + Number(arg ?? 60_000);
    while (!state.closed && Date.now() < until) await sleep(20);
    res.end();
  },
  // Headers only after `arg` ms, then a normal answer (a slow prefill or queue that is within time).
  async "slow-headers"(req, res, arg, state, body, counter) {
    const until = Date.now() + Number(arg ?? 500);
    while (!state.closed && Date.now() < until) await sleep(10);
    if (!state.closed) return BEHAVIOURS.say(req, res, "slow%20but%20fine", state, body, counter);
  },
  // Frames that are not JSON.
  async garbage(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: {this is not json\n\n");
    res.end("data: ]]]\n\n");
  },
  // One good token, then a garbage frame.
  async "garbage-after-first"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-garbage", { content: "ok" }));
    await sleep(20);
    res.end("data: {\"choices\": [tru\n\n");
  },
  // Content with bytes that are not UTF-8 (0xFF 0xFE) inside a frame.
  async "invalid-utf8"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const [before = "", after = ""] = chunk("chatcmpl-bad-utf8", { content: "A__B" }).split("__");
    res.write(Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)]));
    res.write(chunk("chatcmpl-bad-utf8", {}, "stop"));
    res.end("data: [DONE]\n\n");
  },
  // "é👋" with the network chunk boundary inside each character, 15 ms apart.
  async "split-utf8"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const bytes = Buffer.from(chunk("chatcmpl-split", { content: "é👋" }));
    const at = bytes.indexOf(Buffer.from("👋")) + 2;
    const e = bytes.indexOf(Buffer.from("é")) + 1;
    for (const part of [bytes.subarray(0, e), bytes.subarray(e, at), bytes.subarray(at)]) {
      res.write(part);
      await sleep(15);
    }
    res.write(chunk("chatcmpl-split", {}, "stop"));
    res.end("data: [DONE]\n\n");
  },
  // One frame of `arg` KiB of content (default 2048 = 2 MiB).
  async "huge-frame"(req, res, arg) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-huge", { content: "x".repeat(Number(arg ?? 2048) * 1024) }));
    res.write(chunk("chatcmpl-huge", {}, "stop"));
    res.end("data: [DONE]\n\n");
  },
  // Two tokens, then a clean close: no finish_reason, no [DONE].
  async "end-without-done"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-nodone", { content: "Half" }));
    await sleep(20);
    res.end(chunk("chatcmpl-nodone", { content: " an answer" }));
  },
  // 200 and an empty event stream.
  async "empty-stream"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end();
  },
  // 200 with an HTML page (a captive portal or a wrong URL behind a proxy).
  async "html-200"(req, res) {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Welcome</body></html>");
  },
  // An in-stream error event before any token (current builds' data: {"error": …}).
  async "error-frame-first"(req, res) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(`data: ${JSON.stringify({ error: { code: 500, message: "Invalid diff: now finding less tool calls!", type: "server_error" } })}\n\n`);
  },
  // The first `arg` requests to this exact path answer 500 server_error; later ones answer normally.
  async "flaky-500"(req, res, arg, state, body, counter) {
    if (counter <= Number(arg ?? 1)) {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { code: 500, message: "std::bad_alloc", type: "server_error" } }));
    }
    return BEHAVIOURS.say(req, res, "recovered", state, body, counter);
  },
  // The first request to this path: 503 no slot available with Retry-After: `arg` s; then normal.
  // A llama-server restarting: its first `arg` requests (default 2) get the 503 it answers while
  // the model loads, then it answers ("loaded").
  async "loading-then-ok"(req, res, arg, state, body, counter) {
    if (counter <= Number(arg ?? 2)) return BEHAVIOURS.loading(req, res, arg, state, body, counter);
    return BEHAVIOURS.say(req, res, "loaded", state, body, counter);
  },
  // A llama-server that comes back at a moment: `/health` 503 and requests the loading 503 until
  // `arg` (epoch ms), then ready, answering ("back").
  async "loading-until"(req, res, arg, state, body, counter) {
    if (Date.now() < Number(arg)) return BEHAVIOURS.loading(req, res, arg, state, body, counter);
    return BEHAVIOURS.say(req, res, "back", state, body, counter);
  },
  async "busy-then-ok"(req, res, arg, state, body, counter) {
    if (counter <= 1) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": String(arg ?? 1) });
      return res.end(JSON.stringify({ error: { code: 503, message: "no slot available", type: "unavailable_error" } }));
    }
    return BEHAVIOURS.say(req, res, "slot%20freed", state, body, counter);
  },
  // A request whose last message is "hold" streams a token every 100 ms for `arg` ms (holding the
  // one slot); any other answers at once like `say` ("served"): a line behind a busy slot.
  async hold(req, res, arg, state, body, counter) {
    /** @type {Array<{ content?: unknown }>} */
    const messages = JSON.parse(body).messages ?? [];
    if (messages.at(-1)?.content !== "hold") return BEHAVIOURS.say(req, res, "served", state, body, counter);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("chatcmpl-hold", { role: "assistant", content: null }));
    const until = Date.now() + Number(arg ?? 10_000);
    for (let i = 0; !state.closed && Date.now() < until; i++) {
      res.write(chunk("chatcmpl-hold", { content: `t${i} ` }));
      await sleep(100);
    }
    res.write(chunk("chatcmpl-hold", {}, "stop"));
    res.end("data: [DONE]\n\n");
  },
  // 429 with Retry-After: `arg` seconds, always.
  async "rate-limited"(req, res, arg) {
    res.writeHead(429, { "content-type": "application/json", "retry-after": String(arg ?? 30) });
    res.end(JSON.stringify({ error: { code: 429, message: "Too many requests", type: "rate_limit_error" } }));
  },
  // llama-server's own report of a client mistake as 500 (malformed JSON body, as observed).
  async "client-mistake-500"(req, res) {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 500, message: "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error", type: "server_error" } }));
  },
  // A request with a response_format gets the fixture `arg` replayed (a llama-server refusing that
  // schema, e.g. error-json-schema-500); any other is answered at once like `say` ("served").
  async "refuse-schema"(req, res, arg, state, body, counter) {
    if (!JSON.parse(body).response_format) return BEHAVIOURS.say(req, res, "served", state, body, counter);
    return replay(res, [arg ?? "error-json-schema-500"], state);
  },
  // Router mode without the target's model.
  async "router-no-model"(req, res) {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 400, message: "model 'qwen' not found", type: "invalid_request_error" } }));
  },
  // A router whose model was being evicted when the request arrived: its first `arg` requests to this
  // path get the 500 it answers then (test/fixtures/llama-router/evicting-proxy-error-500.body.json),
  // later ones are answered ("reloaded").
  async "router-evicting"(req, res, arg, state, body, counter) {
    if (counter <= Number(arg ?? 1)) {
      res.writeHead(500, { "content-type": "application/json; charset=utf-8", server: "llama.cpp" });
      return res.end(readFileSync(join(FIXTURES, "..", "llama-router", "evicting-proxy-error-500.body.json")));
    }
    return BEHAVIOURS.say(req, res, "reloaded", state, body, counter);
  },
  // A router asked for a model whose file it cannot load (recorded: llama-router/load-failed-500).
  async "router-load-failed"(req, res) {
    res.writeHead(500, { "content-type": "application/json; charset=utf-8", server: "llama.cpp" });
    res.end(readFileSync(join(FIXTURES, "..", "llama-router", "load-failed-500.body.json")));
  },
  // ---- Embeddings (added; the behaviours above are unchanged) ----
  // llama-server started with --embeddings: one 4-dimensional vector per input, in its key order.
  // An empty input is refused with 400 invalid_request_error, as llama-server does.
  async embed(req, res, arg, state, body) {
    const parsed = JSON.parse(body || "{}");
    /** @type {unknown[]} */
    const inputs = Array.isArray(parsed.input) && typeof parsed.input[0] !== "number" ? parsed.input : [parsed.input];
    if (inputs.some((i) => i === "" || (Array.isArray(i) && i.length === 0))) {
      res.writeHead(400, { "content-type": "application/json; charset=utf-8" });
      return res.end(JSON.stringify({ error: { code: 400, message: "Input content cannot be empty", type: "invalid_request_error" } }));
    }
    const data = inputs.map((_, index) => ({ embedding: [0.25, -0.5, 0.125, index], index, object: "embedding" }));
    res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ model: parsed.model ?? "m", object: "list", usage: { prompt_tokens: 2 * inputs.length, total_tokens: 2 * inputs.length }, data }));
  },
  // The first request to this path: 503 no slot available with Retry-After: `arg` s; then `embed`.
  async "busy-then-embed"(req, res, arg, state, body, counter) {
    if (counter <= 1) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": String(arg ?? 1) });
      return res.end(JSON.stringify({ error: { code: 503, message: "no slot available", type: "unavailable_error" } }));
    }
    return BEHAVIOURS.embed(req, res, arg, state, body, counter);
  },
  // gpt-oss's template refusing the model's output (recorded, harmony-* fixtures), by endpoint: chat
  // answers the parse failure (an error frame after the role chunk, or a 500 without streaming),
  // /apply-template the rendered prompt, /v1/completions the raw text of a harmony tool call.
  async "harmony-unparsed"(req, res, arg, state, body) {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const sent = JSON.parse(body || "{}");
    if (path.endsWith("/apply-template")) return replay(res, [sent.add_generation_prompt === false ? "harmony-apply-template-no-generation-prompt" : "harmony-apply-template"], state);
    if (path.endsWith("/v1/completions")) return replay(res, ["harmony-raw-tool-call"], state);
    return replay(res, [sent.stream ? "harmony-unparsed-stream" : "harmony-unparsed-500"], state);
  },
  // A misbehaving proxy in front of llama-server: 400 whose message quotes the request's Authorization
  // header (the target's key), on any endpoint.
  async "echo-authorization"(req, res) {
    res.writeHead(400, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ error: { code: 400, message: `Invalid header: Authorization: ${req.headers.authorization ?? "(none)"} is not accepted here`, type: "invalid_request_error" } }));
  },
};

export async function startFixtureUpstream() {
  /** @type {Array<{ method: string | undefined, path: string, headers: import("node:http").IncomingHttpHeaders, body: string, at: number }>} */
  const received = [];
  /** @type {Array<{ requestId: string | string[], at: number, finished: boolean }>} */
  const closed = [];
  /** @type {Array<{ path: string, at: number }>} */
  const probes = [];
  /** @type {Map<string | undefined, number>} */
  const counters = new Map();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/_requests") return json(res, received);
    if (url.pathname === "/_closed") return json(res, closed);
    if (url.pathname === "/_probes") return json(res, probes);
    if (/^\/u-[^/]+\//.test(url.pathname)) url.pathname = url.pathname.replace(/^\/u-[^/]+/, "");
    const nCtx = /^\/n_ctx-(\d+)\//.exec(url.pathname)?.[1];
    if (nCtx) url.pathname = url.pathname.replace(/^\/n_ctx-\d+/, "");
    const slotCount = Number(/^\/slots-(\d+)\//.exec(url.pathname)?.[1] ?? 1);
    url.pathname = url.pathname.replace(/^\/slots-\d+/, "");
    const noSlots = url.pathname.startsWith("/no-slots/");
    url.pathname = url.pathname.replace(/^\/no-slots/, "");
    if (req.method === "GET" && /\/(health|slots|metrics)$/.test(url.pathname)) {
      probes.push({ path: url.pathname, at: Date.now() });
      const until = /^\/behave\/loading-until\/(\d+)\//.exec(url.pathname)?.[1];
      if (url.pathname.startsWith("/behave/loading/") || (until !== undefined && Date.now() < Number(until))) {
        res.writeHead(503, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "Loading model", type: "unavailable_error", code: 503 } }));
      }
      if (noSlots && url.pathname.endsWith("/slots")) {
        res.writeHead(501, { "content-type": "application/json; charset=utf-8" });
        return res.end(JSON.stringify({ error: { code: 501, message: "This server does not support slots endpoint. Start it with `--slots`", type: "not_supported_error" } }));
      }
      if (url.pathname.endsWith("/metrics")) {
        res.writeHead(501, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { code: 501, message: "This server does not support metrics endpoint. Start it with `--metrics`", type: "not_supported_error" } }));
      }
      return url.pathname.endsWith("/health") ? json(res, { status: "ok" }) : json(res, Array.from({ length: slotCount }, (_, id) => ({ id, is_processing: false, ...(nCtx ? { n_ctx: Number(nCtx) } : {}) })));
    }
    if (url.pathname === "/_reset") {
      received.length = 0;
      closed.length = 0;
      return json(res, { ok: true });
    }
    let body = "";
    for await (const part of req) body += part;
    // The id the test's client sent (Switchyard passes it on as x-client-request-id beside its own x-request-id).
    const requestId = req.headers["x-client-request-id"] ?? req.headers["x-request-id"] ?? "";
    const counter = (counters.get(req.url) ?? 0) + 1;
    counters.set(req.url, counter);
    received.push({ method: req.method, path: url.pathname, headers: req.headers, body, at: Date.now() });
    const state = { closed: false };
    res.on("close", () => {
      state.closed = true;
      closed.push({ requestId, at: Date.now(), finished: res.writableFinished });
    });

    const parts = url.pathname.split("/").filter(Boolean);
    if (parts.at(-1) === "tokenize" && req.method === "POST") {
      // llama-server's /tokenize shape; this fixture's tokenizer: a token per 3 characters (as `continue` counts its prompt).
      const content = String(JSON.parse(body || "{}").content ?? "");
      return json(res, { tokens: Array.from({ length: Math.ceil(content.length / 3) }, (_, i) => i) });
    }
    if (parts.at(-1) === "props") {
      // A template without tool support (e.g. a base model's) unless the path says otherwise.
      return json(res, { chat_template_caps: { supports_tool_calls: !url.pathname.includes("no-tool-template") }, total_slots: slotCount });
    }
    try {
      if (parts[0] === "fixture") return await replay(res, parts.slice(1), state);
      if (parts[0] === "behave") {
        const fn = BEHAVIOURS[parts[1] ?? ""];
        const arg = parts[2] === "v1" ? undefined : parts[2];
        if (fn) return await fn(req, res, arg, state, body, counter);
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "File Not Found", type: "not_found_error", code: 404 } }));
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {string[]} parts the path after /fixture/: the name, then bytes-<n> and gap-<ms>
 * @param {{ closed: boolean }} state
 */
async function replay(res, parts, state) {
  const name = parts[0];
  let bytes = Infinity;
  let gap = 0;
  for (const p of parts.slice(1)) {
    if (p.startsWith("bytes-")) bytes = Number(p.slice(6));
    if (p.startsWith("gap-")) gap = Number(p.slice(4));
  }
  // Each fixture is <name>.json (status, content_type, body file, what it reproduces) + its body file.
  const metaFile = join(FIXTURES, `${name}.json`);
  if (!existsSync(metaFile)) throw new Error(`no fixture ${name}`);
  const meta = JSON.parse(readFileSync(metaFile, "utf8"));
  const data = readFileSync(join(FIXTURES, meta.body));
  res.writeHead(meta.status ?? 200, { "content-type": meta.content_type ?? "text/event-stream", server: "llama.cpp" });
  if (!Number.isFinite(bytes) && gap === 0) return res.end(data);
  const step = Number.isFinite(bytes) ? bytes : data.length;
  for (let i = 0; i < data.length && !state.closed; i += step) {
    res.write(data.subarray(i, i + step));
    if (gap) await sleep(gap);
  }
  res.end();
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {unknown} value
 */
function json(res, value) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
