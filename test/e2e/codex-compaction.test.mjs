// The real Codex CLI auto-compacting a long session through Switchyard and going on, on both of its
// provider paths (issue 30): the built-in `openai` provider compacts with compaction v2 (a
// `response.create` or POST /v1/responses whose last input item is `compaction_trigger`, answered
// with one sealed `compaction` item that later requests carry back); a custom provider compacts
// locally (it asks the model itself for a summary with its own prompt, then sends the summary as a
// user message in place of the history).
//
// The session is made long the way real ones get long: agent-upstream's `compaction` option has the
// model's shell command print a ~36 KB build log besides writing agent-proof.txt. Codex is set to
// compact above COMPACT_LIMIT tokens, which lies between the conversation before compaction and after
// (Codex 0.171.0, as measured):
//   first request   ~5,100 tokens (Codex's instructions, environment, prompt; the upstream counts a
//                   token per 4 characters of the messages)
//   with the log    ~14,400 (tool_output_token_limit keeps the log whole; by default Codex keeps 10 KB
//                   of a tool's output, ~7,900 in all, which would not reach the limit)
//   after it        ~5,200 (instructions, prompt, the ~100-token summary)
// so Codex compacts once, after the tool's result, and the model, shown its own summary, answers
// without running the tool again (with a limit below ~5,200 it would compact before every request).
//
// On the built-in provider every turn goes over the Responses WebSocket, which the HTTP tap records
// only as byte counts, so a recorder in front of it (startSocketRecorder, below) decodes the socket's
// messages as they pass (test/support/socket-recorder.mjs), without changing a byte.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startSocketRecorder } from "../support/socket-recorder.mjs";
import { FINAL_ANSWER, PROOF_TEXT, SUMMARY_TAG, startAgentUpstream, textOf } from "../support/agent-upstream.mjs";
import { startTap } from "../support/http-tap.mjs";
import { exerciseAgent } from "../support/agent-report.mjs";
import { runCodex } from "../support/coding-agents.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

const MODEL = "agent-native";
const COMPACT_LIMIT = 9000;
const SETTINGS = { model_auto_compact_token_limit: COMPACT_LIMIT, tool_output_token_limit: 25_000 };
/** The prompts that ask for a summary: Switchyard's for compaction v2, Codex's for its local compaction. */
const SWITCHYARD_SUMMARY_PROMPT = /^Summarize the conversation so far/;
const CODEX_SUMMARY_PROMPT = /CONTEXT CHECKPOINT COMPACTION/;

/** @type {Awaited<ReturnType<typeof startAgentUpstream>>} */
let upstream;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {Awaited<ReturnType<typeof startTap>>} */
let tap;

before(async () => {
  upstream = await startAgentUpstream({ mode: "native", compaction: true });
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models: { [MODEL]: { targets: [{ kind: "llama", url: upstream.url }] } } } } });
  tap = await startTap(proxy.url);
});

after(async () => {
  await tap?.close();
  await proxy?.stop();
  await upstream?.close();
});

// ---- What went over the wire ---------------------------------------------------------------------

/**
 * @typedef {{ type?: string, role?: string, content?: unknown, encrypted_content?: unknown }} Item
 * @typedef {{ via: string, input: Item[], output: Item[] | null }} Turn one Responses request and the output it completed with
 * @typedef {import("../support/socket-recorder.mjs").SocketMessage} SocketMessage
 */

/**
 * The tap's exchanges once each answered one has its body: the tap keeps an answer when its stream
 * ends, which can be a moment after Codex, done with it at response.completed, has exited.
 */
async function settledExchanges() {
  for (const deadline = Date.now() + 3000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if (tap.exchanges().every((e) => e.status !== 200 || e.method !== "POST" || e.response !== "")) break;
  }
  return tap.exchanges();
}

/**
 * Every Responses request Codex made, over HTTP (from the tap) or the socket (`response.create`),
 * in order, each with the output its `response.completed` carried (null if it never completed).
 * @param {import("../support/http-tap.mjs").Exchange[]} exchanges
 * @param {SocketMessage[]} messages
 * @returns {Turn[]}
 */
function responsesTurns(exchanges, messages) {
  /** @type {Array<Turn & { at: number }>} */
  const turns = [];
  for (const e of exchanges.filter((x) => x.method === "POST" && x.path?.split("?")[0] === "/v1/responses")) {
    const body = parseJson(e.request);
    const events = e.response.split("\n").filter((l) => l.startsWith("data: ")).map((l) => parseJson(l.slice(6)));
    const completed = events.find((ev) => ev?.type === "response.completed")?.response ?? parseJson(e.response);
    turns.push({ via: `POST ${e.status}`, at: e.at, input: itemsOf(body?.input), output: Array.isArray(completed?.output) ? completed.output : null });
  }
  /** @type {Map<number, Turn>} the socket's running response */
  const open = new Map();
  /** @type {Turn[]} */
  const socketTurns = [];
  for (const m of messages) {
    const event = parseJson(m.text);
    if (m.from === "client" && event?.type === "response.create") {
      const turn = { via: `socket ${m.socket}${event.generate === false ? " (generate: false)" : ""}`, input: itemsOf(event.input ?? event.response?.input), output: null };
      socketTurns.push(turn);
      open.set(m.socket, turn);
    } else if (m.from === "server" && event?.type === "response.completed") {
      const turn = open.get(m.socket);
      if (turn) turn.output = Array.isArray(event.response?.output) ? event.response.output : null;
      open.delete(m.socket);
    }
  }
  // HTTP and the socket are not used side by side by one Codex run; HTTP turns come first if it fell back.
  return [...turns.sort((a, b) => a.at - b.at).map(({ at: _at, ...t }) => t), ...socketTurns];
}

/** @param {string} text */
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * @param {unknown} input
 * @returns {Item[]}
 */
function itemsOf(input) {
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input.filter((i) => i && typeof i === "object") : [];
}

/** @param {Item | undefined} item */
const typeOf = (item) => item?.type ?? (item?.role ? "message" : "?");

/** @param {Turn[]} turns one line per turn, for diagnostics and failures */
function describeTurns(turns) {
  return turns.map((t, i) => `#${i} ${t.via}: [${t.input.map((x) => typeOf(x) + (x.role ? `:${x.role}` : "")).join(", ")}] → ${t.output ? `[${t.output.map(typeOf).join(", ")}]` : "(not completed)"}`).join("\n");
}

/**
 * The upstream's chat requests: each one's messages and what the scripted model did.
 * @returns {Array<{ messages: Array<{ role?: string, content?: unknown }>, turn: import("../support/agent-upstream.mjs").Turn | undefined }>}
 */
function upstreamChats() {
  return upstream.chatRequests().map((r) => ({ messages: parseJson(r.body)?.messages ?? [], turn: r.turn }));
}

/** @param {ReturnType<typeof upstreamChats>} chats */
function describeChats(chats) {
  return chats.map((c, i) => `#${i} [${c.messages.map((m) => m.role).join(", ")}] → ${c.turn?.kind === "call" ? `call ${c.turn.tool}` : `${c.turn?.kind}: ${c.turn?.text.slice(0, 60)}`}`).join("\n");
}

// ---- The runs ------------------------------------------------------------------------------------

/**
 * Codex on one provider path, through the socket recorder and the tap, with the compaction settings:
 * it must succeed, write the proof and answer it (exerciseAgent's checks); then returns what went over
 * the wire and what reached the upstream.
 * @param {import("node:test").TestContext} t
 * @param {string} name
 * @param {{ provider: "builtin" | "custom", websockets?: boolean }} options
 */
async function compactingRun(t, name, options) {
  const recorder = await startSocketRecorder(tap.url);
  try {
    const socketLog = () => recorder.decoded().map((m) => `${m.socket} ${m.from}: ${m.text.length > 300 ? `${m.text.slice(0, 300)}…` : m.text}`).filter((line) => !/"type":"response\.[a-z_.]*delta"/.test(line)).join("\n");
    const out = await exerciseAgent({
      name,
      client: runCodex,
      upstream,
      proxy,
      tap: { ...tap, url: recorder.url },
      model: MODEL,
      timeoutMs: 60_000,
      options: { ...options, settings: SETTINGS },
      logs: { "socket messages (deltas left out)": socketLog },
    });
    const turns = responsesTurns(await settledExchanges(), await recorder.messages());
    const chats = upstreamChats();
    const wire = `--- Codex → Switchyard (Responses turns) ---\n${describeTurns(turns)}\n--- Switchyard → upstream (chat) ---\n${describeChats(chats)}`;
    for (const line of `${out.summary}\n${wire}`.split("\n")) t.diagnostic(line);
    return { out, turns, chats, wire };
  } finally {
    await recorder.close();
  }
}

/**
 * What every path must show once compaction is done: the shell tool ran once (the work was not
 * redone after the summary), the summary was asked for once, and the last request answered.
 * @param {ReturnType<typeof upstreamChats>} chats
 * @param {string} wire
 */
function assertWentOn(chats, wire) {
  const calls = chats.filter((c) => c.turn?.kind === "call");
  assert.equal(calls.length, 1, `the shell tool was called ${calls.length} times (want once):\n${wire}`);
  const summaries = chats.filter((c) => c.turn?.kind === "summary");
  assert.equal(summaries.length, 1, `the model was asked for ${summaries.length} summaries (want 1):\n${wire}`);
  assert.ok(summaries[0]?.turn?.kind === "summary" && summaries[0].turn.text.includes(PROOF_TEXT), `the summary does not say what the file holds:\n${wire}`);
  const last = chats.at(-1);
  assert.ok(last?.turn?.kind === "answer" && last.turn.text === FINAL_ANSWER, `the session did not end on the final answer:\n${wire}`);
}

describe("Codex CLI auto-compaction through Switchyard", () => {
  it("built-in provider: compaction v2 (compaction_trigger → one compaction item, carried back), then the answer", async (t) => {
    const { turns, chats, wire } = await compactingRun(t, "codex compaction builtin", { provider: "builtin" });
    // On the wire: one request ends with compaction_trigger, answered with exactly one compaction item …
    const triggered = turns.flatMap((turn, i) => (typeOf(turn.input.at(-1)) === "compaction_trigger" ? [i] : []));
    assert.equal(triggered.length, 1, `want exactly one compaction_trigger request:\n${wire}`);
    const at = /** @type {number} */ (triggered[0]);
    const output = turns[at]?.output ?? [];
    assert.equal(output.length, 1, `the compaction answer's output is not one item:\n${wire}`);
    const item = /** @type {Item} */ (output[0]);
    assert.equal(item.type, "compaction");
    assert.ok(typeof item.encrypted_content === "string" && item.encrypted_content.length > 0, "the compaction item has no encrypted_content");
    // … which a later request carries back in place of the history (no function_call_output left).
    const later = turns.slice(at + 1).find((turn) => turn.input.some((x) => x.type === "compaction" && x.encrypted_content === item.encrypted_content));
    assert.ok(later, `no later request carried the compaction item back:\n${wire}`);
    assert.ok(!later.input.some((x) => x.type === "function_call_output"), `the request after compaction still carries the tool's output:\n${wire}`);
    // Behind Switchyard: the summary was asked for with Switchyard's prompt, and the item came back
    // to the model as that summary, as a user message.
    const asked = chats.findIndex((c) => c.turn?.kind === "summary");
    assert.match(textOf(chats[asked]?.messages.at(-1)?.content), SWITCHYARD_SUMMARY_PROMPT, `the summary request did not end with Switchyard's prompt:\n${wire}`);
    const summary = chats[asked]?.turn?.kind === "summary" ? chats[asked].turn.text : "";
    const shown = chats.slice(asked + 1).find((c) => c.messages.some((m) => m.role === "user" && textOf(m.content) === summary));
    assert.ok(shown, `no later chat request held the summary as a user message:\n${wire}`);
    assertWentOn(chats, wire);
  });

  for (const websockets of [false, true]) {
    it(`custom provider${websockets ? " with supports_websockets" : ""}: local compaction (Codex's own summary request), then the answer`, async (t) => {
      const { turns, chats, wire } = await compactingRun(t, `codex compaction custom${websockets ? " websockets" : ""}`, { provider: "custom", websockets });
      assert.ok(!turns.some((turn) => turn.input.some((x) => x.type === "compaction_trigger" || x.type === "compaction")), `a custom provider sent compaction v2 items:\n${wire}`);
      if (websockets) assert.ok(turns.length > 0 && turns.every((turn) => turn.via.startsWith("socket")), `a turn left the socket:\n${wire}`);
      // On the wire: one request ends with Codex's summary prompt and is answered with the summary …
      const asking = turns.flatMap((turn, i) => {
        const last = turn.input.at(-1);
        return last?.role === "user" && CODEX_SUMMARY_PROMPT.test(textOf(last.content)) ? [i] : [];
      });
      assert.equal(asking.length, 1, `want exactly one summary request:\n${wire}`);
      const at = /** @type {number} */ (asking[0]);
      const answered = (turns[at]?.output ?? []).map((x) => textOf(x.content)).join("\n");
      assert.ok(answered.includes(SUMMARY_TAG), `the summary request was answered with ${JSON.stringify(answered.slice(0, 200))}:\n${wire}`);
      const summary = answered.slice(answered.indexOf(SUMMARY_TAG)).trim();
      // … and a later request sends that summary as a user message in place of the history.
      const later = turns.slice(at + 1).find((turn) => turn.input.some((x) => x.role === "user" && textOf(x.content).includes(summary)));
      assert.ok(later, `no later request carried the summary:\n${wire}`);
      assert.ok(!later.input.some((x) => x.type === "function_call_output"), `the request after compaction still carries the tool's output:\n${wire}`);
      const shown = chats.slice(chats.findIndex((c) => c.turn?.kind === "summary") + 1).find((c) => c.messages.some((m) => m.role === "user" && textOf(m.content).includes(summary)));
      assert.ok(shown, `no later chat request held the summary:\n${wire}`);
      assertWentOn(chats, wire);
    });
  }
});
