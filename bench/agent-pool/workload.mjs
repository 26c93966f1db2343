// The simulated team of bench/agent-pool.mjs, all from a seed: agent sessions with system prompts
// shared by some and their own for others, tool loops that append tool output, contexts that grow
// turn by turn toward the servers' window, think time between turns, sessions arriving in bursts.
// Pure: no I/O, the same seed gives the same sessions, texts and times.
import { mulberry32 } from "../../scripts/gguf-writer.mjs";

/**
 * A chat message as sent.
 * @typedef {{ role: "system" | "user" | "assistant", content: string }} Message
 * @typedef {{ kind: "task" | "tool" | "user", text: string, tokens: number, thinkMs: number }} Turn
 *   `text`: what the turn appends after the previous answer (the first: the task); `tokens`: its size
 *   in the model's tokens (see WORD_TOKENS); `thinkMs`: the pause before it is sent (after the previous
 *   answer; the first turn's is its arrival after the session's burst)
 * @typedef {{ id: number, system: string, systemName: string, systemTokens: number, startMs: number, turns: Turn[] }} Session
 * @typedef {{ sessions: number, windowTokens: number, maxTurns: number, bursts: number, burstGapMs: number }} WorkloadShape
 */

/**
 * Tokens per word of the texts: every word is " w" and five digits, which the Qwen2 tokenizer splits
 * into the word piece and one token per digit (measured with llama-server's /tokenize: 6 per word).
 */
export const WORD_TOKENS = 6;

/** The answers the grammar forces, one per turn kind (an agent's short step, as in a tool loop). */
export const ANSWERS = {
  task: "I will read the files first.",
  tool: "I will run the next tool.",
  user: "I will do that now.",
};

/** 32-bit FNV-1a of a string (to seed a generator from a name). */
function hash32(/** @type {string} */ s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A seeded generator of floats in [0, 1) for a name. */
export const rng = (/** @type {string} */ name) => mulberry32(hash32(name));

/** An integer in [lo, hi]. */
const between = (/** @type {() => number} */ r, /** @type {number} */ lo, /** @type {number} */ hi) => lo + Math.floor(r() * (hi - lo + 1));

/**
 * About `tokens` tokens of text: a heading line, then lines of words.
 * @param {() => number} r @param {string} head @param {number} tokens
 */
function words(r, head, tokens) {
  const n = Math.max(1, Math.round(tokens / WORD_TOKENS));
  const lines = [head];
  for (let k = 0; k < n; k += 12) {
    const line = [];
    for (let j = k; j < Math.min(n, k + 12); j++) line.push(`w${between(r, 10000, 99999)}`);
    lines.push(line.join(" "));
  }
  return lines.join("\n");
}

/**
 * The sessions of a run. Of every 10 sessions, 4 share team prompt A, 3 share team prompt B and 3 have
 * a system prompt of their own (~1,200–1,800 tokens each). A session opens with a task (200–600
 * tokens); each later turn is, 3 times in 4, a tool loop step (the tool's output, 300–1,500 tokens,
 * sent 0.2–1.5 s after the answer) and otherwise the user's next message (40–200 tokens, after
 * 2–8 s). It ends after `maxTurns` turns or before its prompt would pass `windowTokens`. Sessions arrive
 * in `bursts` bursts `burstGapMs` apart (± a quarter), each session within 1.5 s of its burst's start.
 * @param {string} seed
 * @param {WorkloadShape} shape
 * @returns {Session[]}
 */
export function makeSessions(seed, shape) {
  const teams = ["A", "B"].map((name) => {
    const r = rng(`${seed}:team ${name}`);
    const tokens = between(r, 1200, 1800);
    return { name: `team ${name}`, tokens, text: words(r, `You are a coding agent of team ${name}. Tools: read_file, write_file, run_tests, search. Rules:`, tokens) };
  });
  const burstOf = (/** @type {number} */ i) => i % shape.bursts;
  const burstStart = Array.from({ length: shape.bursts }, (_, b) => {
    const r = rng(`${seed}:burst ${b}`);
    return b === 0 ? 0 : b * shape.burstGapMs + (r() - 0.5) * 0.5 * shape.burstGapMs;
  });
  /** @type {Session[]} */
  const sessions = [];
  for (let i = 0; i < shape.sessions; i++) {
    const r = rng(`${seed}:session ${i}`);
    const k = i % 10;
    let system;
    if (k < 4) system = teams[0];
    else if (k < 7) system = teams[1];
    else {
      const tokens = between(r, 1200, 1800);
      system = { name: `own ${i}`, tokens, text: words(r, `You are coding agent ${i}, working alone. Tools: read_file, run_tests. Rules:`, tokens) };
    }
    /** @type {Turn[]} */
    const turns = [];
    const template = 8; // the chat template's tokens per message, about
    let context = system.tokens + template;
    for (let t = 0; t < shape.maxTurns; t++) {
      const kind = t === 0 ? "task" : r() < 0.75 ? "tool" : "user";
      const tokens = kind === "task" ? between(r, 200, 600) : kind === "tool" ? between(r, 300, 1500) : between(r, 40, 200);
      const answer = t === 0 ? 0 : 12 + template;
      // Room for the answer and the estimate's error (the template's real tokens, words that split
      // differently): what llama-server counts ran up to ~100 tokens over this sum.
      if (context + answer + tokens + template + 320 > shape.windowTokens) break;
      context += answer + tokens + template;
      const thinkMs = kind === "task" ? r() * 1500 : kind === "tool" ? 200 + r() * 1300 : 2000 + r() * 6000;
      const head = kind === "task" ? `Task of session ${i}:` : kind === "tool" ? `Tool output, session ${i}, step ${t}:` : `Session ${i}'s user, step ${t}:`;
      turns.push({ kind, text: words(r, head, tokens), tokens, thinkMs });
    }
    sessions.push({ id: i, system: system.text, systemName: system.name, systemTokens: system.tokens, startMs: burstStart[burstOf(i)], turns });
  }
  return sessions;
}

/**
 * Session `s`'s messages for turn `t` (0-based): its system prompt, its task, then per earlier turn
 * the answer the grammar forced and the text the turn appended.
 * @param {Session} s @param {number} t
 * @returns {Message[]}
 */
export function messagesAt(s, t) {
  /** @type {Message[]} */
  const messages = [{ role: "system", content: s.system }];
  for (let k = 0; k <= t; k++) {
    if (k > 0) messages.push({ role: "assistant", content: ANSWERS[s.turns[k - 1].kind] });
    messages.push({ role: "user", content: s.turns[k].text });
  }
  return messages;
}
