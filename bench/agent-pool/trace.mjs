#!/usr/bin/env node
// Cuts a placement trace out of a bench/agent-pool.mjs --json file: one strategy's turns in send
// order, each with when it was sent, when its first token and its end came, and its prompt as
// message parts (an id naming the text and its length in characters of JSON), so a unit test can
// replay the arrivals through the placement rule without the texts (test/unit/routing/placement/).
//
//   node bench/agent-pool/trace.mjs RUN.json [--strategy pinned] [--seed agent-pool] [--quick] > FIXTURE.json
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { makeSessions, messagesAt } from "./workload.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { strategy: { type: "string", default: "pinned" } },
});
const run = JSON.parse(readFileSync(positionals[0], "utf8"));
const sessions = makeSessions(run.command.includes("--seed") ? run.command.split("--seed ")[1].split(" ")[0] : "agent-pool", run.shape);
/** @type {Array<{ session: number, turn: number, at: number, firstTokenAt: number | null, endAt: number, server: number | null, promptTokens: number, cachedTokens: number, parts: Array<[string, number]> }>} */
const turns = [];
for (const r of run.records.filter((/** @type {any} */ r) => r.strategy === values.strategy).sort((/** @type {any} */ a, /** @type {any} */ b) => a.sentAtMs - b.sentAtMs)) {
  const s = sessions[r.session];
  const messages = messagesAt(s, r.turn);
  // Parts named for what they are: the system prompt by its name (shared ones share an id), the rest by session and turn.
  const parts = messages.map((m, k) => {
    const id = k === 0 ? `system ${s.systemName}` : m.role === "assistant" ? `answer ${s.id}.${(k - 1) / 2}` : `user ${s.id}.${(k - 1) / 2}`;
    return /** @type {[string, number]} */ ([id, JSON.stringify(m).length]);
  });
  turns.push({
    session: r.session,
    turn: r.turn,
    at: Math.round(r.sentAtMs),
    firstTokenAt: r.ttftMs === null ? null : Math.round(r.sentAtMs + r.ttftMs),
    endAt: Math.round(r.sentAtMs + r.ms),
    server: r.server,
    promptTokens: r.promptTokens,
    cachedTokens: r.cachedTokens,
    parts,
  });
}
process.stdout.write(JSON.stringify({ source: `${run.command} (${run.startedAt}), strategy ${values.strategy}`, servers: 3, slots: 4, turns }, null, 0).replace(/\{"session"/g, '\n{"session"') + "\n");
