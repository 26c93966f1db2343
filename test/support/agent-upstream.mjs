// An upstream that speaks llama-server's HTTP protocol and plays a coding agent's model, for the
// end-to-end tests that drive real agent clients (test/e2e/coding-agents*.test.mjs) through Switchyard.
//
// Its "model" plays one scripted task: find the client's shell tool among the tools the request
// declares, call it with a command that writes agent-proof.txt and prints it, then — once the tool's
// result is in the conversation — answer "The file says switchyard-ok.". A request without a shell
// tool (a title or summary side request) gets a short plain answer.
//
//   const up = await startAgentUpstream({ mode: "native" });   // or "text", or "llama" + llamaUrl
//   … point a Switchyard llama target at up.url …
//   up.chatRequests()  // what reached /v1/chat/completions, parsed
//
// Modes:
//   native  /props says the template can call tools; Switchyard sends `tools`, and the call comes
//           back as `delta.tool_calls` (id, type, name, arguments in pieces), as llama-server's
//           native tool parser sends it.
//   text    /props says it cannot; Switchyard uses prompt mode (no `tools`, a system-prompt section
//           describing them, a `grammar`), so the tools are read from that section and the call is
//           written as content: <tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>.
//   llama   a pass-through to the real llama-server at `llamaUrl`: every request is forwarded byte
//           for byte, except that a /v1/chat/completions body gets `grammar` = one literal, the text
//           the turn needs (the <tool_call> text, or the answer), so even a random-weight model
//           writes exactly that (reference llama-server §10). Needs a prompt-mode target
//           (`"tools": "prompt"`): llama-server refuses `grammar` together with `tools`.
//
// `compaction: true` (any mode) plays the same task across a context compaction, for a client told
// to compact early (Codex's model_auto_compact_token_limit): the shell command also prints a long
// build log (LONG_LOG_LINES lines), so its result pushes the conversation past the limit; asked for
// a summary (the last message is a user turn with Codex's local compaction prompt or Switchyard's
// compaction v2 prompt), the model writes one that starts with SUMMARY_TAG and, once the tool has
// run, says what the file holds; shown that summary later, it answers FINAL_ANSWER without calling
// the tool again. Without the option nothing changes.
//
// Paths: POST /v1/chat/completions (stream or not), GET /props, /health, /slots, /v1/models (and
// /models), POST /apply-template, /tokenize, /detokenize, /v1/chat/completions/input_tokens; /metrics
// answers 501 as without --metrics. GET /_requests: everything received (method, path, headers,
// body), oldest first; POST /_reset forgets it.
import { Agent, createServer, request as httpRequest } from "node:http";

// A fresh connection per forwarded request: llama-server (cpp-httplib) closes a connection idle for
// 5 s, and a pooled socket reused just as it does so fails with "socket hang up" (seen on a loaded
// machine as a refused /apply-template, which a real client then saw as a failed turn).
const fresh = new Agent({ keepAlive: false });

export const PROOF_FILE = "agent-proof.txt";
export const PROOF_TEXT = "switchyard-ok";
export const SHELL_COMMAND = `printf '${PROOF_TEXT}\\n' > ${PROOF_FILE} && cat ${PROOF_FILE}`;
export const FINAL_ANSWER = `The file says ${PROOF_TEXT}.`;
export const SIDE_ANSWER = "Agent proof run";

// ---- compaction: true ----
export const LONG_LOG_LINES = 1800;
/**
 * The proof command, then a long log: ~36 KB of output, about 9,000 tokens at 4 bytes a token (under
 * the 10,000 that Codex's exec_command returns by default; what it keeps in the history is capped
 * by its tool_output_token_limit, 10 KB unless set).
 */
export const LONG_SHELL_COMMAND = `${SHELL_COMMAND} && seq -f 'build log line %g' 1 ${LONG_LOG_LINES}`;
/** How a summary this model wrote begins, so a later request shows whether it carries one. */
export const SUMMARY_TAG = "[handoff summary]";
/**
 * The last user turn that asks for a summary: Codex's local compaction prompt (templates/compact/
 * prompt.md in openai/codex), and Switchyard's for compaction v2 and /v1/responses/compact
 * (COMPACTION_PROMPT, src/api/responses/compact-conversation.ts).
 */
const SUMMARY_REQUESTS = [/CONTEXT CHECKPOINT COMPACTION/, /^Summarize the conversation so far/];

const MODEL = "switchyard-agent";
const N_CTX = 131072;
const FINGERPRINT = "b1-80fb11a";

/** Shell tools by the names clients give them, most specific first. */
const SHELL_TOOL_NAMES = ["exec_command", "shell_command", "shell", "local_shell", "Bash", "bash", "run_shell_command", "run_terminal_cmd", "execute_command", "run_command", "terminal"];
const COMMAND_PROPERTIES = ["command", "cmd"];

// ---- Reading the conversation --------------------------------------------------------------------

/**
 * The parts of a chat request body the scripted model reads (a client's JSON: anything may be missing).
 * @typedef {{ role?: string, content?: unknown, tool_calls?: unknown }} Message
 * @typedef {{ type?: string | string[], properties?: Record<string, JsonSchema>, required?: string[], anyOf?: JsonSchema[], oneOf?: JsonSchema[],
 *   const?: unknown, default?: unknown, enum?: unknown[], minimum?: number, maximum?: number }} JsonSchema
 * @typedef {{ type?: string, function?: { name?: string, description?: string, parameters?: JsonSchema } } | null} DeclaredTool
 * @typedef {{ messages?: unknown, tools?: DeclaredTool[], grammar?: unknown, stream?: boolean }} ChatBody
 * @typedef {{ name: string, description: string, parameters: JsonSchema | null }} Tool
 * @typedef {{ kind: "call", tool: string, args: Record<string, unknown> } | { kind: "answer" | "side" | "summary", text: string }} Turn
 * @typedef {{ method: string | undefined, path: string, headers: import("node:http").IncomingHttpHeaders, body: string, at: number, turn?: Turn, status?: number }} Received
 *   `status`: what the real server answered (llama mode), for a failure's report.
 */

/**
 * The text of a message's content: a string, or the text of its parts.
 * @param {unknown} content
 * @returns {string}
 */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : (p?.text ?? p?.content ?? ""))).map(textOf).join("\n");
  if (content && typeof content === "object") {
    const part = /** @type {{ text?: unknown, content?: unknown }} */ (content);
    return textOf(part.text ?? part.content ?? "");
  }
  return "";
}

/**
 * A tool's result in the history: a `tool` message (native), or the user message prompt mode writes
 * for it ("Tool result from <name>: …"). Null when there is none yet.
 * @param {Message[]} messages
 */
function toolResultOf(messages) {
  const results = messages.filter((m) => m.role === "tool" || m.role === "function" || (m.role === "user" && /^Tool result\b/.test(textOf(m.content))));
  return results.length ? results.map((m) => textOf(m.content)).join("\n") : null;
}

/**
 * Tools as [{name, description, parameters}] from an OpenAI chat `tools` array.
 * @param {DeclaredTool[] | undefined} tools
 * @returns {Tool[]}
 */
function declaredTools(tools) {
  return (tools ?? []).flatMap((t) => (t?.type === "function" && t.function?.name ? [{ name: t.function.name, description: t.function.description ?? "", parameters: t.function.parameters ?? {} }] : []));
}

/**
 * Tools from the system-prompt section prompt mode writes (src/toolcalls/build-tool-prompt.ts):
 * "# Tools", then per tool "## <name>", its description, "Parameters: <JSON Schema on one line>".
 * Descriptions may hold markdown headings of their own, so a heading counts as a tool only when the
 * grammar names it (when there is a grammar) and its section ends with a Parameters line.
 * @param {Message[]} messages
 * @param {unknown} grammar
 * @returns {Tool[]}
 */
function promptedTools(messages, grammar) {
  const system = messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => textOf(m.content)).join("\n");
  const at = system.lastIndexOf("# Tools\n\nYou can call these tools.");
  if (at < 0) return [];
  const end = system.indexOf("\n# Reply format", at);
  const section = system.slice(at, end < 0 ? undefined : end);
  const named = grammarToolNames(grammar);
  /** @type {Tool[]} */
  const tools = [];
  /** @type {Tool | null} */
  let current = null;
  for (const line of section.split("\n")) {
    const heading = /^## (.+)$/.exec(line);
    if (heading?.[1] !== undefined && (!named || named.has(heading[1]))) {
      current = { name: heading[1], description: "", parameters: null };
      tools.push(current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith("Parameters: ")) {
      try {
        current.parameters = JSON.parse(line.slice("Parameters: ".length));
        continue;
      } catch {}
    }
    current.description += `${line}\n`;
  }
  return tools.filter((t) => t.parameters);
}

/**
 * The tool names a prompt-mode grammar allows (its `name ::= "\"a\"" | …` rule), or null.
 * @param {unknown} grammar
 */
function grammarToolNames(grammar) {
  if (typeof grammar !== "string") return null;
  const rule = /^name ::= (.+)$/m.exec(grammar);
  if (rule?.[1] === undefined) return null;
  /** @type {Set<string>} */
  const names = new Set();
  for (const m of rule[1].matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    try {
      names.add(JSON.parse(JSON.parse(`"${m[1]}"`)));
    } catch {}
  }
  return names.size ? names : null;
}

/** @param {JsonSchema | null | undefined} parameters */
function commandProperty(parameters) {
  const props = parameters?.properties ?? {};
  return COMMAND_PROPERTIES.find((p) => p in props) ?? null;
}

/**
 * The client's shell tool: by name, else the first tool whose schema has a command property.
 * @param {Tool[]} tools
 */
export function findShellTool(tools) {
  for (const name of SHELL_TOOL_NAMES) {
    const t = tools.find((x) => x.name === name && commandProperty(x.parameters));
    if (t) return t;
  }
  return tools.find((t) => commandProperty(t.parameters)) ?? null;
}

/**
 * Arguments for the shell tool from its JSON Schema: the command, and a value for each other required property.
 * @param {Tool} tool one that findShellTool chose (its schema has a command property)
 */
export function shellArguments(tool, command = SHELL_COMMAND) {
  const schema = tool.parameters ?? {};
  const props = schema.properties ?? {};
  const key = commandProperty(schema);
  if (key === null) throw new Error(`${tool.name} has no command property (${COMMAND_PROPERTIES.join(", ")})`);
  /** @type {Record<string, unknown>} */
  const args = {};
  args[key] = typeOf(props[key]) === "array" ? ["bash", "-lc", command] : command;
  for (const name of schema.required ?? []) {
    if (name in args) continue;
    args[name] = sampleValue(name, props[name] ?? {});
  }
  return args;
}

/**
 * @param {JsonSchema | undefined} schema
 * @returns {string}
 */
function typeOf(schema) {
  const t = schema?.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") ?? "string";
  if (t) return t;
  const alt = schema?.anyOf ?? schema?.oneOf;
  if (Array.isArray(alt)) return typeOf(alt.find((s) => s?.type !== "null") ?? {});
  return "string";
}

/**
 * @param {string} name
 * @param {JsonSchema} schema
 */
function sampleValue(name, schema) {
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  switch (typeOf(schema)) {
    case "boolean":
      return false;
    case "integer":
    case "number":
      return /timeout/i.test(name) ? Math.min(60000, schema.maximum ?? 60000) : (schema.minimum ?? 1);
    case "array":
      return [];
    case "object":
      return {};
    default:
      return /desc/i.test(name) ? `Write ${PROOF_FILE} and print it` : /dir|path|cwd/i.test(name) ? "." : "proof";
  }
}

/**
 * What the scripted model does with a chat body: `{kind: "call", tool, args}`, `{kind: "answer",
 * text}` (after the tool's result) or `{kind: "side", text}` (no shell tool to call). With
 * `compaction`, also `{kind: "summary", text}` and the answer from a summary (compactionTurn).
 * @param {ChatBody} body
 * @param {{ compaction?: boolean }} [options]
 * @returns {Turn}
 */
export function decideTurn(body, { compaction = false } = {}) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const scripted = compaction ? compactionTurn(messages) : null;
  if (scripted) return scripted;
  const result = toolResultOf(messages);
  if (result !== null) {
    return result.includes(PROOF_TEXT) ? { kind: "answer", text: FINAL_ANSWER } : { kind: "answer", text: `The command did not print the proof; it said: ${result.slice(0, 200)}` };
  }
  const tools = body.tools ? declaredTools(body.tools) : promptedTools(messages, body.grammar);
  const tool = findShellTool(tools);
  if (!tool) return { kind: "side", text: SIDE_ANSWER };
  return { kind: "call", tool: tool.name, args: shellArguments(tool, compaction ? LONG_SHELL_COMMAND : SHELL_COMMAND) };
}

/**
 * The turns of a session across a compaction, or null for an ordinary turn: asked for a summary, the
 * summary (saying what the file holds once the tool's result, or an earlier summary, shows it);
 * shown one of its summaries that says so, the final answer (the tool's work is not done again).
 * @param {Message[]} messages
 * @returns {Turn | null}
 */
export function compactionTurn(messages) {
  const last = messages.at(-1);
  const summaries = messages.filter((m) => m.role === "user" && textOf(m.content).includes(SUMMARY_TAG)).map((m) => textOf(m.content));
  const known = [toolResultOf(messages) ?? "", ...summaries].some((t) => t.includes(PROOF_TEXT));
  if (last?.role === "user" && SUMMARY_REQUESTS.some((re) => re.test(textOf(last.content)))) return { kind: "summary", text: compactionSummary(known) };
  return summaries.some((t) => t.includes(PROOF_TEXT)) ? { kind: "answer", text: FINAL_ANSWER } : null;
}

/**
 * The summary the model writes: the goal, what was done, what remains.
 * @param {boolean} done whether the command has run and printed the proof
 */
export function compactionSummary(done) {
  const goal = `The user asked for a shell command that writes ${PROOF_FILE} in the current directory and prints it, then what the file says.`;
  return done
    ? `${SUMMARY_TAG} ${goal} Done: the command ran; ${PROOF_FILE} holds "${PROOF_TEXT}" (its long build log is not needed). Remaining: tell the user the file says ${PROOF_TEXT}.`
    : `${SUMMARY_TAG} ${goal} Nothing has run yet. Remaining: run the command, then say what the file holds.`;
}

/**
 * The prompt-mode text of a call, as a Hermes-style model writes it.
 * @param {string} name
 * @param {unknown} args
 */
export function toolCallText(name, args) {
  return `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
}

// ---- llama-server's wire format ------------------------------------------------------------------

const randomId = (/** @type {number} */ n) => Array.from({ length: n }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 62)]).join("");

/**
 * Text in pieces of 2–6 characters, as sampled tokens come.
 * @param {string} text
 */
function pieces(text) {
  const out = [];
  for (let i = 0, n = 3; i < text.length; i += n, n = 2 + ((i * 7) % 5)) out.push(text.slice(i, i + n));
  return out;
}

/**
 * @param {number} promptChars
 * @param {number} completionChars
 */
function usage(promptChars, completionChars) {
  const prompt = Math.ceil(promptChars / 4);
  const completion = Math.max(1, Math.ceil(completionChars / 4));
  return {
    usage: { completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: 0 } },
    timings: { cache_n: 0, prompt_n: prompt, prompt_ms: 12.5, prompt_per_token_ms: 12.5 / prompt, prompt_per_second: prompt / 0.0125, predicted_n: completion, predicted_ms: completion * 18.5, predicted_per_token_ms: 18.5, predicted_per_second: 54.05405405405405 },
  };
}

/**
 * A turn's answer: an assistant message (`content` or `tool_calls`) and its finish reason.
 * @typedef {{ type: "function", function: { name: string, arguments: string }, id: string }} ToolCall
 * @typedef {{ message: { role: "assistant", content: string, tool_calls?: undefined } | { role: "assistant", content: null, tool_calls: ToolCall[] }, finish: string }} Reply
 */

/**
 * @param {Turn} turn
 * @param {string} mode
 * @returns {Reply}
 */
function replyOf(turn, mode) {
  if (turn.kind !== "call") return { message: { role: "assistant", content: turn.text }, finish: "stop" };
  if (mode === "text") return { message: { role: "assistant", content: toolCallText(turn.tool, turn.args) }, finish: "stop" };
  /** @type {ToolCall} */
  const call = { type: "function", function: { name: turn.tool, arguments: JSON.stringify(turn.args) }, id: randomId(32) };
  return { message: { role: "assistant", content: null, tool_calls: [call] }, finish: "tool_calls" };
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {Reply} reply
 * @param {number} promptChars
 */
function streamReply(res, reply, promptChars) {
  const id = `chatcmpl-${randomId(32)}`;
  const created = Math.floor(Date.now() / 1000);
  const frame = (/** @type {unknown[]} */ choices, extra = {}) => `data: ${JSON.stringify({ choices, created, id, model: MODEL, system_fingerprint: FINGERPRINT, object: "chat.completion.chunk", ...extra })}\n\n`;
  const delta = (/** @type {Record<string, unknown>} */ d, /** @type {string | null} */ finish = null) => frame([{ finish_reason: finish, index: 0, delta: d }]);
  res.writeHead(200, { "content-type": "text/event-stream", server: "llama.cpp" });
  res.write(delta({ role: "assistant", content: null }));
  let chars = 0;
  const { message } = reply;
  if (message.tool_calls) {
    for (const [index, call] of message.tool_calls.entries()) {
      const args = call.function.arguments;
      const cut = [1, Math.ceil(args.length / 2)];
      res.write(delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: args.slice(0, cut[0]) } }] }));
      res.write(delta({ tool_calls: [{ index, function: { arguments: args.slice(cut[0], cut[1]) } }] }));
      res.write(delta({ tool_calls: [{ index, function: { arguments: args.slice(cut[1]) } }] }));
      chars += args.length + call.function.name.length;
    }
  } else {
    for (const p of pieces(message.content)) res.write(delta({ content: p }));
    chars += message.content.length;
  }
  res.write(delta({}, reply.finish));
  res.write(frame([], usage(promptChars, chars)));
  res.end("data: [DONE]\n\n");
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {Reply} reply
 * @param {number} promptChars
 */
function plainReply(res, reply, promptChars) {
  const chars = reply.message.tool_calls ? reply.message.tool_calls[0].function.arguments.length : reply.message.content.length;
  const body = { choices: [{ finish_reason: reply.finish, index: 0, message: reply.message }], created: Math.floor(Date.now() / 1000), model: MODEL, system_fingerprint: FINGERPRINT, object: "chat.completion", ...usage(promptChars, chars), id: `chatcmpl-${randomId(32)}` };
  json(res, body);
}

/** @param {string} mode */
function props(mode) {
  return {
    default_generation_settings: { id: 0, id_task: -1, n_ctx: N_CTX, speculative: false, is_processing: false, params: { n_predict: -1, temperature: 0.8, top_k: 40, top_p: 0.95, stream: true } },
    total_slots: 2,
    model_alias: MODEL,
    model_path: `/models/${MODEL}.gguf`,
    modalities: { vision: false, audio: false },
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: false,
    webui: false,
    chat_template: "{{ messages }}",
    chat_template_caps: { supports_object_arguments: true, supports_parallel_tool_calls: mode === "native", supports_preserve_reasoning: false, supports_string_content: true, supports_system_role: true, supports_tool_calls: mode === "native", supports_tools: mode === "native", supports_typed_content: true },
    bos_token: "<|endoftext|>",
    eos_token: "<|im_end|>",
    build_info: FINGERPRINT,
    is_sleeping: false,
  };
}

function models() {
  const meta = { vocab_type: 2, n_vocab: 151936, n_ctx_train: 32768, n_embd: 64, n_params: 11000000, size: 44976608, n_ctx: N_CTX / 2 };
  return {
    models: [{ name: MODEL, model: MODEL, modified_at: "", size: "", digest: "", type: "model", description: "", tags: [""], capabilities: ["completion"], parameters: "", details: { parent_model: "", format: "gguf", family: "", families: [""], parameter_size: "", quantization_level: "" } }],
    object: "list",
    data: [{ id: MODEL, aliases: [MODEL], tags: [], object: "model", created: Math.floor(Date.now() / 1000), owned_by: "llamacpp", meta }],
  };
}

// ---- The server ----------------------------------------------------------------------------------

/**
 * @param {{ mode?: "native"|"text"|"llama", llamaUrl?: string, compaction?: boolean }} [opts]
 * @returns {Promise<{ url: string, port: number, mode: string, requests(): Received[], chatRequests(): Received[],
 *           reset(): void, close(): Promise<void> }>}
 */
export async function startAgentUpstream({ mode = "native", llamaUrl, compaction = false } = {}) {
  if (mode === "llama" && !llamaUrl) throw new Error("mode llama needs llamaUrl");
  /** @type {Received[]} */
  const received = [];
  /** llama mode: each client request's turn grammar, by Switchyard's x-request-id (see forward). */
  /** @type {Map<string, string>} */
  const grammars = new Map();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    if (path === "/_requests") return json(res, received);
    if (path === "/_reset") {
      received.length = 0;
      return json(res, { ok: true });
    }
    /** @type {Buffer[]} */
    const chunks = [];
    for await (const part of req) chunks.push(part);
    const raw = Buffer.concat(chunks);
    const body = raw.toString("utf8");
    /** @type {Received} */
    const entry = { method: req.method, path, headers: req.headers, body, at: Date.now() };
    received.push(entry);
    try {
      if (mode === "llama") return await forward(req, res, raw, entry, /** @type {string} */ (llamaUrl), grammars, compaction);
      return answer(req, res, path, body, mode, entry, compaction);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: 500, message: String((e instanceof Error && e.stack) || e), type: "server_error" } }));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    port,
    mode,
    url: `http://127.0.0.1:${port}`,
    requests: () => received.slice(),
    chatRequests: () => received.filter((r) => r.method === "POST" && /\/chat\/completions$/.test(r.path)),
    reset: () => void (received.length = 0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 * @param {string} path
 * @param {string} body
 * @param {string} mode
 * @param {Received} entry
 * @param {boolean} compaction
 */
function answer(req, res, path, body, mode, entry, compaction) {
  const p = path.replace(/^\/v1(?=\/(models|chat|completions|embeddings)\b)/, "");
  if (req.method === "GET" && p === "/health") return json(res, { status: "ok" });
  if (req.method === "GET" && p === "/slots") return json(res, [0, 1].map((id) => ({ id, id_task: -1, n_ctx: N_CTX / 2, speculative: false, is_processing: false, params: { chat_format: mode === "native" ? "Hermes 2 Pro" : "Content-only" } })));
  if (req.method === "GET" && p === "/props") return json(res, props(mode));
  if (req.method === "GET" && p === "/models") return json(res, models());
  if (req.method === "GET" && p === "/metrics") {
    return json(res, { error: { code: 501, message: "This server does not support metrics endpoint. Start it with `--metrics`", type: "not_supported_error" } }, 501);
  }
  if (req.method !== "POST") return json(res, { error: { code: 404, message: "File Not Found", type: "not_found_error" } }, 404);
  const parsed = body ? JSON.parse(body) : {};
  if (p === "/apply-template") return json(res, { prompt: JSON.stringify(parsed.messages ?? []) });
  if (p === "/tokenize") {
    const text = String(parsed.content ?? "");
    const tokens = [];
    for (let i = 0; i < text.length; i += 4) tokens.push(parsed.with_pieces ? { id: 1000 + i / 4, piece: text.slice(i, i + 4) } : 1000 + i / 4);
    return json(res, { tokens });
  }
  if (p === "/detokenize") return json(res, { content: (parsed.tokens ?? []).map(() => "tokn").join("") });
  if (p === "/chat/completions/input_tokens") return json(res, { object: "response.input_tokens", input_tokens: Math.ceil(JSON.stringify(parsed.messages ?? []).length / 4) });
  if (p === "/chat/completions") {
    const turn = decideTurn(parsed, { compaction });
    entry.turn = turn;
    const reply = replyOf(turn, mode);
    const promptChars = JSON.stringify(parsed.messages ?? []).length;
    return parsed.stream ? streamReply(res, reply, promptChars) : plainReply(res, reply, promptChars);
  }
  return json(res, { error: { code: 404, message: "File Not Found", type: "not_found_error" } }, 404);
}

/**
 * llama mode: the request to the real server unchanged, but for the literal grammar on chat turns.
 * A raw completion (`/v1/completions`, which Switchyard asks for when the server's chat parser
 * refused the turn's answer) gets the grammar of the chat turn with the same `x-request-id`.
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 * @param {Buffer} raw
 * @param {Received} entry
 * @param {string} llamaUrl
 * @param {Map<string, string>} grammars
 * @param {boolean} compaction
 */
async function forward(req, res, raw, entry, llamaUrl, grammars, compaction) {
  let out = raw;
  const requestId = String(req.headers["x-request-id"] ?? "");
  if (req.method === "POST" && /\/chat\/completions$/.test(entry.path)) {
    const parsed = JSON.parse(raw.toString("utf8"));
    const turn = decideTurn(parsed, { compaction });
    entry.turn = turn;
    const text = turn.kind === "call" ? toolCallText(turn.tool, turn.args) : turn.text;
    parsed.grammar = `root ::= ${JSON.stringify(text)}`;
    if (requestId) grammars.set(requestId, parsed.grammar);
    out = Buffer.from(JSON.stringify(parsed));
  } else if (req.method === "POST" && /^\/v1\/completions$/.test(entry.path) && grammars.has(requestId)) {
    const parsed = JSON.parse(raw.toString("utf8"));
    parsed.grammar = grammars.get(requestId);
    out = Buffer.from(JSON.stringify(parsed));
  }
  const target = new URL(req.url ?? "/", llamaUrl);
  const headers = { ...req.headers, host: target.host };
  delete headers["content-length"];
  delete headers["transfer-encoding"];
  if (out.length || req.method === "POST") headers["content-length"] = String(out.length);
  await new Promise((resolve, reject) => {
    const up = httpRequest(target, { method: req.method, headers, agent: fresh }, (upRes) => {
      entry.status = upRes.statusCode;
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
      upRes.on("end", resolve);
      upRes.on("error", reject);
    });
    up.on("error", reject);
    res.on("close", () => up.destroy());
    up.end(out);
  });
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {unknown} value
 */
function json(res, value, status = 200) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", server: "llama.cpp" });
  res.end(JSON.stringify(value));
}
