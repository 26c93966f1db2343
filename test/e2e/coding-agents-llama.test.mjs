// Codex CLI and Claude Code through Switchyard (launcher + wrangler dev, dev open mode) to the REAL
// llama-server with the tiny random-weight test model, through a whole tool loop as in
// coding-agents.test.mjs: the agent's shell tool writes agent-proof.txt, the agent reads the result
// and answers.
//
// The model is driven by a literal grammar (reference llama-server §10): agent-upstream.mjs in
// `llama` mode forwards every request to the real server unchanged except for `grammar`, which it
// sets to the one text the turn needs — the <tool_call> text on the first turn, the answer once the
// tool's result is in the history — read from the messages Switchyard sent. The real server then
// tokenizes the clients' whole prompts (instructions, tool descriptions, history, through its chat
// template), samples exactly those tokens and streams them with its own framing, usage and timings.
//
// What a grammar cannot drive: native `tool_calls` from the real server. llama-server refuses
// `grammar` together with `tools` ("Cannot use custom grammar constraints with tools"), so the target
// is in prompt mode (`"tools": "prompt"`): Switchyard describes the tools in the system prompt and its
// rewriter turns the generated text into tool calls. The server's own tool-call parser and its
// `delta.tool_calls` framing are covered by the scripted upstream's native mode and by the recorded
// fixtures, not here.
//
// The same loop against a llama-server serving gpt-oss's harmony template, whose chat parser refuses
// every answer the grammar makes the model write (it has no harmony channel markup): each turn's
// chat request ends in llama-server's "does not match the expected … format" error, and the agents
// still complete, because Switchyard asks that server for the raw text (`/apply-template`, then
// `/v1/completions`, which agent-upstream gives the turn's grammar by its x-request-id) and reads it
// itself (docs/tool-calls.md, "When llama-server's own parser refuses the output").
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { llamaCache } from "../../scripts/llama-cache.mjs";
import { startAgentUpstream } from "../support/agent-upstream.mjs";
import { startTap } from "../support/http-tap.mjs";
import { exerciseAgent } from "../support/agent-report.mjs";
import { runClaude, runCodex } from "../support/coding-agents.mjs";
import { startLlamaServer } from "../support/llama-server.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let harmony;
/** @type {import("../support/agent-report.mjs").AgentUpstream} */
let upstream;
/** @type {import("../support/agent-report.mjs").AgentUpstream} */
let harmonyUpstream;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {import("../support/agent-report.mjs").Tap} */
let tap;

before(async () => {
  // The agents' prompts are long (Codex's first is ≈ 8k tokens, Claude Code's ≈ 11k): two slots of
  // 64k. llama-server caps a slot at the model's training context (8192 for the test model), so the
  // model's metadata is overridden to allow more; random weights do not mind.
  const long = ["--override-kv", "llama.context_length=int:131072"];
  [llama, harmony] = await Promise.all([
    startLlamaServer({ ctx: 131072, parallel: 2, args: long }),
    startLlamaServer({ ctx: 131072, parallel: 2, args: [...long, "--jinja", "--chat-template-file", join(llamaCache().templates, "openai-gpt-oss-120b.jinja")] }),
  ]);
  upstream = await startAgentUpstream({ mode: "llama", llamaUrl: llama.url });
  harmonyUpstream = await startAgentUpstream({ mode: "llama", llamaUrl: harmony.url });
  proxy = await startSwitchyard({
    vars: {
      SWITCHYARD_CONFIG: {
        models: {
          "agent-llama": { targets: [{ kind: "llama", url: upstream.url, tools: "prompt" }] },
          "agent-harmony": { targets: [{ kind: "llama", url: harmonyUpstream.url, tools: "prompt" }] },
        },
      },
    },
  });
  tap = await startTap(proxy.url);
});

after(async () => {
  await tap?.close();
  await proxy?.stop();
  await upstream?.close();
  await harmonyUpstream?.close();
  await Promise.all([llama?.stop(), harmony?.stop()]);
});

/**
 * @param {import("node:test").TestContext} t
 * @param {string} name
 * @param {(opts: import("../support/coding-agents.mjs").AgentRunOptions) => Promise<import("../support/coding-agents.mjs").AgentOutcome>} client
 */
async function exercise(t, name, client) {
  const out = await exerciseAgent({ name, client, upstream, proxy, tap, model: "agent-llama", timeoutMs: 180_000, logs: { "llama-server log": () => llama.logs() } });
  t.diagnostic(out.summary);
  return out;
}

/**
 * The loop against the harmony server: it completes, and every chat turn there was refused by the
 * server's parser and answered from its raw text.
 * @param {import("node:test").TestContext} t
 * @param {string} name
 * @param {(opts: import("../support/coding-agents.mjs").AgentRunOptions) => Promise<import("../support/coding-agents.mjs").AgentOutcome>} client
 */
async function exerciseRefused(t, name, client) {
  const refusals = () => (harmony.logs().match(/unparsed peg-native output/g) ?? []).length;
  const before = refusals();
  const out = await exerciseAgent({ name, client, upstream: harmonyUpstream, proxy, tap, model: "agent-harmony", timeoutMs: 180_000, logs: { "llama-server log": () => harmony.logs() } });
  t.diagnostic(out.summary);
  const sent = harmonyUpstream.requests().filter((r) => r.method === "POST");
  const chats = sent.filter((r) => r.path.endsWith("/chat/completions")).length;
  const raws = sent.filter((r) => r.path === "/v1/completions").length;
  t.diagnostic(`chat requests ${chats}, raw completions ${raws}; parser refusals in the server log: ${refusals() - before}`);
  // Each of the client's turns was answered (200) from exactly one raw completion, found by the
  // x-request-id Switchyard sends upstream; on failure the message lists both sides in order.
  const turns = out.exchanges.filter((e) => e.method === "POST");
  const unanswered = turns.filter((e) => e.status !== 200 || sent.filter((r) => r.headers["x-request-id"] === e.requestId && r.path === "/v1/completions").length !== 1);
  assert.ok(turns.length >= 2 && unanswered.length === 0 && raws === turns.length && chats >= raws,
    `every chat turn refused and answered raw (client turns ${turns.length}, chat ${chats}, raw ${raws})\n${account(out.exchanges, sent)}`);
  return out;
}

/**
 * What the client and the upstream exchanged, in order, for a failure's message: each client request
 * with its status, x-request-id and the end of its answer; each request upstream with its status.
 * @param {import("../support/http-tap.mjs").Exchange[]} exchanges
 * @param {import("../support/agent-upstream.mjs").Received[]} sent
 */
function account(exchanges, sent) {
  const t0 = Math.min(...exchanges.map((e) => e.at), ...sent.map((r) => r.at));
  const client = exchanges.map((e) => `  +${e.at - t0} ms client ${e.method} ${e.path} → ${e.status} ${e.requestId ?? "(no id)"}: …${JSON.stringify(e.response.slice(-300))}`);
  const upstream = sent.map((r) => `  +${r.at - t0} ms upstream ${r.path} → ${r.status ?? "(no answer)"} ${r.headers["x-request-id"] ?? "(no id)"}${r.turn ? ` turn ${r.turn.kind}` : ""}`);
  return [...client, ...upstream].join("\n");
}

describe("Codex CLI, real llama-server", () => {
  it("prompt-mode tool calls", async (t) => { await exercise(t, "codex llama", runCodex); });
});

describe("Claude Code, real llama-server", () => {
  it("prompt-mode tool calls", async (t) => { await exercise(t, "claude llama", runClaude); });
});

describe("Codex CLI, real llama-server whose chat parser refuses every answer (gpt-oss's template)", () => {
  it("prompt-mode tool calls, each answer read from the raw text", async (t) => { await exerciseRefused(t, "codex harmony", runCodex); });
});

describe("Claude Code, real llama-server whose chat parser refuses every answer (gpt-oss's template)", () => {
  it("prompt-mode tool calls, each answer read from the raw text", async (t) => { await exerciseRefused(t, "claude harmony", runClaude); });
});
