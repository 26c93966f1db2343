// The real coding-agent clients — Codex CLI, Claude Code, the OpenAI Agents SDK, opencode, Qwen
// Code, Continue CLI — through Switchyard as users start it (launcher + wrangler dev, no keys: dev
// open mode), each in a fresh temp HOME with its documented custom-endpoint configuration and its
// default settings, through a whole tool loop: the agent calls its shell tool to write
// agent-proof.txt, reads the result, answers. Behind Switchyard, test/support/agent-upstream.mjs
// speaks llama-server's protocol and plays the model, in two modes:
//   native  /props says the template calls tools: the call comes back as delta.tool_calls;
//   text    /props says it cannot: Switchyard uses prompt mode, and the call is written as
//           <tool_call> text that Switchyard's rewriter turns into a tool call.
// A transparent tap (test/support/http-tap.mjs) between client and Switchyard records what each client
// sent, so a failure shows the exact request Switchyard refused and its answer.
// The real llama-server variants are in coding-agents-llama.test.mjs.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeSandbox } from "../support/agent-client.mjs";
import { PROOF_TEXT, startAgentUpstream } from "../support/agent-upstream.mjs";
import { startTap } from "../support/http-tap.mjs";
import { exerciseAgent } from "../support/agent-report.mjs";
import { runAgentsSdk, runClaude, runCodex, runContinue, runOpencode, runQwen } from "../support/coding-agents.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

/**
 * @typedef {import("../support/agent-report.mjs").AgentUpstream} AgentUpstream
 * @typedef {import("../support/coding-agents.mjs").AgentRunOptions} AgentRunOptions
 * @typedef {import("../support/coding-agents.mjs").AgentOutcome} AgentOutcome
 */

/** @type {Array<"native" | "text">} */
const MODES = ["native", "text"];
/** @type {Record<string, AgentUpstream>} */
const upstreams = {};
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {import("../support/agent-report.mjs").Tap} */
let tap;

before(async () => {
  [upstreams.native, upstreams.text] = await Promise.all(MODES.map((mode) => startAgentUpstream({ mode })));
  const models = Object.fromEntries(MODES.map((mode) => [`agent-${mode}`, { targets: [{ kind: "llama", url: upstreams[mode].url }] }]));
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models } } });
  tap = await startTap(proxy.url);
});

after(async () => {
  await tap?.close();
  await proxy?.stop();
  await Promise.all(Object.values(upstreams).map((u) => u.close()));
});

/**
 * @template {object} O
 * @template {AgentOutcome} R
 * @param {import("node:test").TestContext} t
 * @param {string} name
 * @param {(opts: AgentRunOptions & O) => Promise<R>} client
 * @param {"native" | "text"} mode
 * @param {O} [options]
 * @param {{ sandbox?: import("../support/agent-client.mjs").Sandbox, minChatRequests?: number }} [more]
 */
async function exercise(t, name, client, mode, options, more = {}) {
  const out = await exerciseAgent({ name, client, upstream: upstreams[mode], proxy, tap, model: `agent-${mode}`, options, ...more });
  t.diagnostic(out.summary);
  return out;
}

/**
 * Codex over the Responses WebSocket: the upgrade was accepted (101) and every turn went over it, with
 * no reconnect or HTTP fallback.
 * @param {{ exchanges: import("../support/http-tap.mjs").Exchange[], run: { stderr: string, stdout: string } }} out
 */
function assertSocketOnly(out) {
  const sockets = out.exchanges.filter((e) => e.method === "GET" && e.path === "/v1/responses");
  assert.ok(sockets.length >= 1 && sockets.every((e) => e.status === 101), `the Responses WebSocket was not accepted: ${JSON.stringify(sockets.map((e) => e.status))}`);
  const posts = out.exchanges.filter((e) => e.method === "POST" && e.path === "/v1/responses");
  assert.equal(posts.length, 0, "a turn fell back to HTTP");
  assert.doesNotMatch(out.run.stderr + out.run.stdout, /Reconnecting|Falling back from WebSockets/);
}

describe("Codex CLI", () => {
  for (const mode of MODES) it(`${mode} tool calls`, async (t) => { await exercise(t, `codex ${mode}`, runCodex, mode); });
  // The other common setup: the built-in openai provider at openai_base_url, which opens the socket first.
  for (const mode of MODES) {
    it(`${mode} tool calls, built-in provider (openai_base_url, over the Responses WebSocket)`, async (t) => {
      assertSocketOnly(await exercise(t, `codex builtin ${mode}`, runCodex, mode, { provider: "builtin" }));
    });
  }
  it("native tool calls, custom provider with supports_websockets", async (t) => {
    assertSocketOnly(await exercise(t, "codex custom websockets", runCodex, "native", { websockets: true }));
  });
});

describe("Claude Code", () => {
  for (const mode of MODES) it(`${mode} tool calls`, async (t) => { await exercise(t, `claude ${mode}`, runClaude, mode); });
});

describe("OpenAI Agents SDK", () => {
  for (const mode of MODES) {
    for (const api of /** @type {const} */ (["responses", "chat"])) {
      for (const stream of [true, false]) {
        it(`${mode} tool calls, ${api === "responses" ? "Responses" : "Chat Completions"} model, ${stream ? "streamed" : "not streamed"}`, async (t) => {
          await exercise(t, `agents-sdk ${mode} ${api} ${stream ? "stream" : "nostream"}`, runAgentsSdk, mode, { api, stream });
        });
      }
    }
  }
  // Chaining needs stored responses: the second run sends only its new input and
  // previous_response_id, so the tool's result reaches the model only from the stored history.
  it("native tool calls, a second run chained with previousResponseId", async (t) => {
    const sandbox = makeSandbox("agents-sdk-chain");
    const first = await exercise(t, "agents-sdk chain first", runAgentsSdk, "native", { api: "responses", stream: false }, { sandbox });
    const second = await exercise(t, "agents-sdk chain second", runAgentsSdk, "native", { api: "responses", stream: true, previousResponseId: first.lastResponseId, input: "What did the file say?" }, { sandbox, minChatRequests: 1 });
    /** @type {Array<{ role: string, content?: unknown }>} */
    const history = JSON.parse(second.chats[0].body).messages;
    assert.ok(history.some((m) => m.role === "tool" && JSON.stringify(m.content).includes(PROOF_TEXT)), `the chained request's history lacks the tool result: ${JSON.stringify(history.map((m) => m.role))}`);
    sandbox.remove();
  });
});

describe("opencode", () => {
  for (const mode of MODES) it(`${mode} tool calls`, async (t) => { await exercise(t, `opencode ${mode}`, runOpencode, mode); });
});

describe("Qwen Code", () => {
  for (const mode of MODES) {
    for (const authType of ["openai", "openai-responses", "anthropic"]) {
      it(`${mode} tool calls, --auth-type ${authType}`, async (t) => { await exercise(t, `qwen ${mode} ${authType}`, runQwen, mode, { authType }); });
    }
  }
});

describe("Continue CLI", () => {
  for (const mode of MODES) it(`${mode} tool calls`, async (t) => { await exercise(t, `continue ${mode}`, runContinue, mode); });
});
