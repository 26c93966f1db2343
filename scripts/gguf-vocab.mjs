// The vocabulary side of the test model (scripts/gguf-writer.mjs writes it): a byte-level BPE
// vocabulary cut to its first tokens, and which of its tokens are only part of a UTF-8 character.
/** @typedef {import("./gguf-writer.mjs").GgufScalar} GgufScalar @typedef {import("./gguf-writer.mjs").GgufValue} GgufValue */

/**
 * The vocabulary's `tokenizer.*` keys cut to its first `size` ordinary tokens and every special one
 * but padding (renumbered after them), with only the merges whose parts and result
 * are kept; the `*_token_id` keys follow the renumbering. A byte-level BPE vocabulary's first 256
 * tokens are the bytes and the rest come in merge order, so every text still tokenizes (into more,
 * shorter pieces).
 *
 * Why: llama.cpp checks a grammar against every token of the vocabulary each time the sampled token
 * breaks it, which is every token for random weights; with Qwen2's 151,936 tokens a literal grammar
 * costs ~14 ms of CPU a token and the output layer ~1.5 ms, against ~0.6 and ~0.1 ms at 4,096
 * (measured here, llama-server 3.21.1, -t 1).
 * @param {Map<string, GgufValue>} vocabKv
 * @param {number} size
 * @returns {Map<string, GgufValue>}
 */
export function cutVocabulary(vocabKv, size) {
  const tokens = vocabKv.get("tokenizer.ggml.tokens");
  const types = vocabKv.get("tokenizer.ggml.token_type");
  const merges = vocabKv.get("tokenizer.ggml.merges");
  if (!tokens || tokens.itemType === undefined || !types || types.itemType === undefined) throw new Error("the vocabulary has no tokens or token types");
  if (vocabKv.get("tokenizer.ggml.model")?.value !== "gpt2") throw new Error("only a byte-level BPE (gpt2) vocabulary can be cut");
  if (size < 256) throw new Error("a cut vocabulary keeps at least the 256 byte tokens");
  const NORMAL = 1;
  // Padding entries ("[PAD151646]"…) fill a vocabulary up to its matrix size and mean nothing: kept,
  // they would be 290 of 4,389 tokens, which a random model writes freely.
  const padding = (/** @type {number} */ i) => /^\[PAD\d+\]$/.test(String(tokens.value[i]));
  /** Old ids kept, in their new order. */
  const kept = [];
  for (let i = 0; i < tokens.value.length; i++) if (types.value[i] === NORMAL ? i < size : !padding(i)) kept.push(i);
  const renumbered = new Map(kept.map((old, id) => [old, id]));
  const texts = new Set(kept.map((i) => String(tokens.value[i])));
  /** @type {Map<string, GgufValue>} */
  const out = new Map();
  for (const [k, v] of vocabKv) {
    if (!k.startsWith("tokenizer.")) continue;
    if (k === "tokenizer.ggml.tokens" || k === "tokenizer.ggml.token_type") out.set(k, { ...v, itemType: /** @type {number} */ (v.itemType), value: kept.map((i) => /** @type {GgufScalar[]} */ (v.value)[i]) });
    else if (k === "tokenizer.ggml.merges" && merges?.itemType !== undefined) {
      const keep = merges.value.filter((m) => {
        const [a, b] = String(m).split(" ");
        return texts.has(a) && texts.has(b) && texts.has(a + b);
      });
      out.set(k, { ...merges, value: keep });
    } else if (k.endsWith("_token_id") && v.itemType === undefined && typeof v.value === "number") {
      const id = renumbered.get(v.value);
      if (id !== undefined) out.set(k, { type: v.type, value: id });
    } else out.set(k, v);
  }
  return out;
}

/** GPT-2's byte-level alphabet, reversed: each printable stand-in character → its byte. */
function byteOfChar() {
  /** @type {number[]} */
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) (bs.push(b), cs.push(256 + n++));
  return new Map(bs.map((b, i) => [String.fromCodePoint(/** @type {number} */ (cs[i])), b]));
}

/**
 * Ids of the ordinary tokens whose bytes are not whole UTF-8 on their own (a lone byte of a
 * multi-byte character, or a piece of one).
 * @param {GgufScalar[]} tokens
 */
export function partialUtf8Ids(tokens) {
  const map = byteOfChar();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  /** @type {number[]} */
  const ids = [];
  tokens.forEach((t, id) => {
    const chars = [...String(t)];
    if (!chars.every((c) => map.has(c))) return;
    try {
      decoder.decode(Uint8Array.from(chars.map((c) => /** @type {number} */ (map.get(c)))));
    } catch {
      ids.push(id);
    }
  });
  return ids;
}
