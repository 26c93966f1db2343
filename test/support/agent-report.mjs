// Runs one coding-agent client on the proof task and checks the outcome; when it fails, the error
// carries what is needed to see why: the client's output, the requests Switchyard refused (from the
// tap in front of it) with its answers, what reached the upstream, and Switchyard's log.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeSandbox, tail } from "./agent-client.mjs";
import { PROOF_TEXT } from "./agent-upstream.mjs";

/**
 * @typedef {import("./agent-client.mjs").Sandbox} Sandbox
 * @typedef {import("./coding-agents.mjs").AgentRunOptions} AgentRunOptions
 * @typedef {import("./coding-agents.mjs").AgentOutcome} AgentOutcome
 * @typedef {Awaited<ReturnType<typeof import("./agent-upstream.mjs").startAgentUpstream>>} AgentUpstream
 * @typedef {Awaited<ReturnType<typeof import("./http-tap.mjs").startTap>>} Tap
 */

/**
 * @template {object} O what the client takes besides AgentRunOptions
 * @template {AgentOutcome} R
 * @param {{ name: string, client: (opts: AgentRunOptions & O) => Promise<R>, upstream: AgentUpstream, proxy: { logs(): string },
 *           tap: Tap, model: string, timeoutMs?: number, options?: O, minChatRequests?: number,
 *           sandbox?: Sandbox, logs?: Record<string, () => string> }} opts
 *   `sandbox`: run in this one (kept afterwards) instead of a fresh one. `logs`: more logs for a
 *   failure's report, as {title: () => text}.
 */
export async function exerciseAgent({ name, client, upstream, proxy, tap, model, timeoutMs = 120_000, options, minChatRequests = 2, sandbox: given, logs = {} }) {
  upstream.reset();
  tap.reset();
  const logsFrom = proxy.logs().length;
  const sandbox = given ?? makeSandbox(name.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
  const out = await client(/** @type {AgentRunOptions & O} */ ({ base: tap.url, model, sandbox, timeoutMs, ...options }));
  const problems = [];
  if (!out.succeeded) problems.push(`the client did not succeed (exit ${out.run.code}${out.run.signal ? `, ${out.run.signal}` : ""}${out.run.timedOut ? `, killed after ${timeoutMs} ms` : ""})`);
  const proof = sandbox.proof();
  if (!proof?.includes(PROOF_TEXT)) problems.push(proof === null ? "agent-proof.txt was not written" : `agent-proof.txt holds ${JSON.stringify(proof)}`);
  if (!out.answer?.includes(PROOF_TEXT)) problems.push(`the final answer ${JSON.stringify(out.answer?.slice(0, 300) ?? null)} lacks ${PROOF_TEXT}`);
  const chats = upstream.chatRequests();
  if (chats.length < minChatRequests) problems.push(`the upstream saw ${chats.length} chat request(s), want ≥ ${minChatRequests}`);
  // The mode is what Switchyard chose from /props (or the target's `tools`): native sends `tools`,
  // prompt mode sends none and describes them in the system prompt.
  for (const r of chats.filter((c) => c.turn?.kind === "call")) {
    const sent = Array.isArray(JSON.parse(r.body).tools);
    if (sent !== (upstream.mode === "native")) problems.push(`a ${upstream.mode}-mode upstream was ${sent ? "sent" : "not sent"} \`tools\``);
  }
  // The whole exchanges, for replaying a refused request by hand (AGENT_E2E_KEEP=1 keeps them always).
  const keep = problems.length > 0 || process.env.AGENT_E2E_KEEP === "1";
  if (keep) {
    writeFileSync(join(sandbox.root, "exchanges.json"), JSON.stringify(tap.exchanges(), null, 2));
    writeFileSync(join(sandbox.root, "upstream-requests.json"), JSON.stringify(upstream.requests(), null, 2));
  }
  if (problems.length) {
    const report = [
      `${name}: ${problems.join("; ")}`,
      `sandbox kept at ${sandbox.root} (exchanges.json: client ↔ Switchyard; upstream-requests.json)`,
      section(`client (${out.run.ms} ms) stdout`, tail(out.run.stdout, 3000)),
      section("client stderr", tail(out.run.stderr, 3000)),
      section("requests Switchyard refused", describeRefusals(tap.refused()) || "(none)"),
      section("client → Switchyard", tap.exchanges().map((e) => `${e.method} ${e.path} → ${e.status}`).join("\n")),
      section("Switchyard → upstream (chat)", chats.map(describeChat).join("\n") || "(none)"),
      section("Switchyard log", tail(proxy.logs().slice(logsFrom), 4000)),
      ...Object.entries(logs).map(([title, read]) => section(title, tail(read(), 3000))),
    ].join("\n");
    assert.fail(report);
  }
  if (!given && !keep) sandbox.remove();
  const exchanges = tap.exchanges();
  const calls = exchanges.map((e) => `${e.method} ${e.path} ${e.status}`);
  const turns = chats.map((r) => (r.turn?.kind === "call" ? `call ${r.turn.tool}` : (r.turn?.kind ?? "?")));
  const summary = `${out.run.ms} ms; client → Switchyard: ${calls.join(", ")}; upstream turns: ${turns.join(", ")}`;
  return { ...out, chats, exchanges, summary };
}

/**
 * @param {string} title
 * @param {string} body
 */
function section(title, body) {
  return `\n--- ${title} ---\n${body}`;
}

/**
 * Each distinct refusal once (clients retry the same request), with how often it came.
 * @param {import("./http-tap.mjs").Exchange[]} refused
 */
function describeRefusals(refused) {
  /** @type {Map<string, { e: import("./http-tap.mjs").Exchange, times: number }>} */
  const seen = new Map();
  for (const e of refused) {
    const key = `${e.method} ${e.path} ${e.status} ${e.response}`;
    const prior = seen.get(key);
    if (prior) prior.times++;
    else seen.set(key, { e, times: 1 });
  }
  return [...seen.values()]
    .map(({ e, times }) => `${e.method} ${e.path} → ${e.status}${times > 1 ? ` (×${times}, the first shown)` : ""}\nrequest: ${abbreviate(e.request)}\nresponse: ${tail(e.response, 2000)}`)
    .join("\n\n");
}

/**
 * One line per chat request: stream, tools, message roles, what the scripted model did.
 * @param {import("./agent-upstream.mjs").Received} r
 */
export function describeChat(r) {
  /** @type {{ tools?: Array<{ type?: string, function?: { name?: string } }>, messages?: Array<{ role: string, tool_calls?: unknown }>, stream?: unknown, grammar?: unknown }} */
  let body = {};
  try {
    body = JSON.parse(r.body);
  } catch {}
  const tools = (body.tools ?? []).map((t) => t.function?.name ?? t.type).join(",");
  const roles = (body.messages ?? []).map((m) => m.role + (m.tool_calls ? "+calls" : "")).join(" ");
  const turn = r.turn ? (r.turn.kind === "call" ? `call ${r.turn.tool}(${JSON.stringify(r.turn.args)})` : `${r.turn.kind}: ${r.turn.text.slice(0, 60)}`) : "";
  return `${r.path} stream=${body.stream} tools=[${tools}] grammar=${body.grammar ? "yes" : "no"} messages=[${roles}] → ${turn}`;
}

/**
 * A JSON body with long strings cut, so that its shape shows in a report.
 * @param {string} text
 */
export function abbreviate(text, max = 200) {
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return tail(text, 2000);
  }
  /**
   * @param {unknown} v
   * @returns {unknown}
   */
  const cut = (v) => {
    if (typeof v === "string") return v.length > max ? `${v.slice(0, max)}…(${v.length} chars)` : v;
    if (Array.isArray(v)) return v.map(cut);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x)]));
    return v;
  };
  return JSON.stringify(cut(value));
}
