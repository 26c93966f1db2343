// The agent-like conversations of bench/cache-routing.mjs: seeded pseudo-random "wordN" texts sized in
// tokens with a llama-server's `POST /tokenize`, so that one run is reproducible while every cell's
// texts are its own (the seed is the run's seed and the cell's name).
import { mulberry32 } from "../../scripts/gguf-writer.mjs";

/** The assistant's answers, one per turn (turn t answers with ANSWERS[(t - 1) % length]). */
export const ANSWERS = [
  "I will run the tests next.",
  "I will read the failing file now.",
  "I will apply the fix and rerun the suite.",
  "I will check the logs for the error.",
  "I will update the config and retry.",
  "I will summarise the changes for review.",
];

/** Token sizes of the texts (the brief's: a ~2,000-token shared preamble, a ~300-token first task, ~600 per later turn). */
export const SIZES = { preamble: 2000, task: 300, followUp: 600 };

/**
 * A chat message as sent.
 * @typedef {{ role: "system" | "user" | "assistant", content: string }} Message
 * @typedef {{ preamble: string, tasks: string[][], tokens: { preamble: number, tasks: number[][] } }} CellTexts
 *   `tasks[i][t]`: conversation i's user message of turn t + 1 (t = 0 is the first task)
 */

/**
 * 32-bit FNV-1a of a string (to seed the generator from a name).
 * @param {string} s
 */
function hash32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A seeded generator of floats in [0, 1) for a name (mulberry32, as the test model's weights use).
 * @param {string} name
 * @returns {() => number}
 */
export function rng(name) {
  return mulberry32(hash32(name));
}

/**
 * A seeded Fisher–Yates shuffle (a new array).
 * @template T
 * @param {T[]} xs
 * @param {() => number} random
 * @returns {T[]}
 */
export function shuffle(xs, random) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Counts the tokens of `text` with a llama-server's tokenizer.
 * @param {string} url llama-server's base URL
 * @param {string} text
 * @returns {Promise<number>}
 */
export async function countTokens(url, text) {
  const res = await fetch(`${url}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: text }),
  });
  if (res.status !== 200) throw new Error(`POST ${url}/tokenize: ${res.status} ${await res.text()}`);
  const body = /** @type {{ tokens: unknown[] }} */ (await res.json());
  return body.tokens.length;
}

/**
 * Words until `text` is `target` tokens long (within 1 %, at most a few /tokenize calls): a first
 * guess from the running tokens-per-word estimate, then words added or dropped by the difference.
 * `head` is a fixed opening line (not counted apart: the whole text is sized).
 * @param {{ url: string, target: number, random: () => number, head: string, lines?: number }} o
 * @returns {Promise<{ text: string, tokens: number }>}
 */
export async function sizedText({ url, target, random, head, lines = 12 }) {
  /** @type {string[]} */
  const words = [];
  const more = (/** @type {number} */ n) => {
    for (let k = 0; k < n; k++) words.push(`word${Math.floor(random() * 100000)}`);
  };
  // Lines of words, like paragraphs, tool descriptions or file listings.
  const render = () => {
    const per = Math.max(1, Math.ceil(words.length / lines));
    const out = [head];
    for (let k = 0; k < words.length; k += per) out.push(words.slice(k, k + per).join(" "));
    return out.join("\n");
  };
  more(Math.max(1, Math.round(target / 6)));
  let tokens = await countTokens(url, render());
  for (let round = 0; round < 8 && Math.abs(tokens - target) > Math.max(2, target / 100); round++) {
    const perWord = tokens / Math.max(1, words.length);
    const delta = Math.round((target - tokens) / perWord);
    if (delta > 0) more(delta);
    else words.splice(words.length + Math.min(-1, delta));
    tokens = await countTokens(url, render());
  }
  return { text: render(), tokens };
}

/**
 * The texts of one cell: the shared preamble (system prompt and a tools-like listing) and, per
 * conversation, its first task and its later user/tool-result messages.
 * @param {{ url: string, seed: string, cell: string, conversations: number, turns: number }} o
 * @returns {Promise<CellTexts>}
 */
export async function cellTexts({ url, seed, cell, conversations, turns }) {
  const random = rng(`${seed}:${cell}:preamble`);
  const preamble = await sizedText({
    url,
    target: SIZES.preamble,
    random,
    lines: 40,
    head: `You are a coding agent of team ${cell}. Follow the rules below and call the tools listed when needed.\nTools: read_file(path), write_file(path, text), run_tests(filter), search(query); rules and tool notes:`,
  });
  /** @type {string[][]} */
  const tasks = [];
  /** @type {number[][]} */
  const tokens = [];
  for (let i = 0; i < conversations; i++) {
    const r = rng(`${seed}:${cell}:conversation ${i}`);
    const texts = [];
    const counts = [];
    for (let t = 0; t < turns; t++) {
      const first = t === 0;
      const { text, tokens: n } = await sizedText({
        url,
        target: first ? SIZES.task : SIZES.followUp,
        random: r,
        lines: first ? 3 : 8,
        head: first ? `Task ${i} of ${cell}:` : `Tool result for conversation ${i}, turn ${t + 1} of ${cell}:`,
      });
      texts.push(text);
      counts.push(n);
    }
    tasks.push(texts);
    tokens.push(counts);
  }
  return { preamble: preamble.text, tasks, tokens: { preamble: preamble.tokens, tasks: tokens } };
}

/**
 * Conversation i's messages at turn `turn` (1-based): the preamble, the first task, then per earlier
 * turn the assistant's answer and the next user message.
 * @param {CellTexts} texts
 * @param {number} i
 * @param {number} turn
 * @returns {Message[]}
 */
export function messagesAt(texts, i, turn) {
  /** @type {Message[]} */
  const messages = [{ role: "system", content: texts.preamble }, { role: "user", content: texts.tasks[i][0] }];
  for (let t = 1; t < turn; t++) {
    messages.push({ role: "assistant", content: answerAt(t) });
    messages.push({ role: "user", content: texts.tasks[i][t] });
  }
  return messages;
}

/**
 * The answer the grammar forces at turn `turn` (1-based).
 * @param {number} turn
 */
export const answerAt = (turn) => ANSWERS[(turn - 1) % ANSWERS.length];

/**
 * An estimate of the longest prompt of a cell in tokens: the texts plus the chat template's few
 * tokens per message (`<|im_start|>role\n … <|im_end|>\n`), generously.
 * @param {CellTexts} texts
 * @param {number} turns
 */
export function longestPrompt(texts, turns) {
  let longest = 0;
  for (const counts of texts.tokens.tasks) {
    const answers = Array.from({ length: turns - 1 }, (_, t) => answerAt(t + 1).length); // ≥ 1 token per char is generous
    const n = texts.tokens.preamble + counts.reduce((a, b) => a + b, 0) + answers.reduce((a, b) => a + b, 0) + 8 * (2 * turns + 1);
    longest = Math.max(longest, n);
  }
  return longest;
}
