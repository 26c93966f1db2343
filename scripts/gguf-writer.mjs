// A small GGUF v3 reader/writer (no dependencies; Node 20 and 22) and a generator for a tiny
// random-weight llama-architecture model that llama.cpp's `llama-server` can load. Tests drive that
// model with literal GBNF grammars (see docs: reference llama-server §10), so the weights only have to
// be valid, not useful.
//
//   readGguf(pathOrBuffer, { tensors? })   → { version, alignment, kv: Map, tensors, dataOffset }
//   writeGguf(outPath, { kv, tensors, alignment? })
//   writeTinyLlamaModel({ vocabPath, templatePath?, outPath, seed?, hparams?, vocabSize? }) → summary
//
// GGUF layout (ggml/src/gguf.cpp): "GGUF", u32 version, u64 n_tensors, u64 n_kv, the KV pairs, the
// tensor infos (name, u32 n_dims, u64 ne[n_dims] with ne0 = the fastest-varying dimension, u32 type,
// u64 offset relative to the data section), padding to `general.alignment` (default 32), then the
// tensor data, each tensor padded to the alignment. All little-endian.
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { cutVocabulary, partialUtf8Ids } from "./gguf-vocab.mjs";

/**
 * A KV pair's value: one scalar of `type`, or (type ARRAY) a list of `itemType` scalars.
 * @typedef {string | number | bigint | boolean} GgufScalar
 * @typedef {{ type: number, value: GgufScalar, itemType?: undefined } | { type: number, itemType: number, value: GgufScalar[] }} GgufValue
 */

/** Bump when the generated model's bytes change, so cached models are regenerated. */
export const GGUF_WRITER_VERSION = 2;

export const GGUF_MAGIC = "GGUF";
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** gguf_type (value types of KV pairs). */
export const GGUF_TYPE = Object.freeze({
  UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7,
  STRING: 8, ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12,
});

/** ggml_type (tensor element types) this module can write. */
export const GGML_TYPE = Object.freeze({ F32: 0, F16: 1 });
/** @type {Record<number, number>} */
const GGML_TYPE_SIZE = { [GGML_TYPE.F32]: 4, [GGML_TYPE.F16]: 2 };

/** @type {Record<number, number>} */
const SCALAR_SIZE = {
  [GGUF_TYPE.UINT8]: 1, [GGUF_TYPE.INT8]: 1, [GGUF_TYPE.UINT16]: 2, [GGUF_TYPE.INT16]: 2,
  [GGUF_TYPE.UINT32]: 4, [GGUF_TYPE.INT32]: 4, [GGUF_TYPE.FLOAT32]: 4, [GGUF_TYPE.BOOL]: 1,
  [GGUF_TYPE.UINT64]: 8, [GGUF_TYPE.INT64]: 8, [GGUF_TYPE.FLOAT64]: 8,
};

const pad = (/** @type {number} */ n, /** @type {number} */ align) => Math.ceil(n / align) * align;

// ---------------------------------------------------------------------------------------------
// Reading

class Reader {
  /** @param {Buffer} buf */
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  /** @param {number} n */
  need(n) {
    if (this.pos + n > this.buf.length) throw new Error(`GGUF: unexpected end of data at byte ${this.pos}`);
  }
  u8() { this.need(1); return this.buf.readUInt8(this.pos++); }
  u32() { this.need(4); const v = this.buf.readUInt32LE(this.pos); this.pos += 4; return v; }
  u64() {
    this.need(8);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`GGUF: u64 too large at byte ${this.pos - 8}`);
    return Number(v);
  }
  string() {
    const n = this.u64();
    this.need(n);
    const s = this.buf.toString("utf8", this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /**
   * @param {number} type
   * @returns {GgufScalar}
   */
  scalar(type) {
    const b = this.buf;
    const size = SCALAR_SIZE[type];
    if (type === GGUF_TYPE.STRING) return this.string();
    if (size === undefined) throw new Error(`GGUF: unknown value type ${type} at byte ${this.pos}`);
    this.need(size);
    const p = this.pos;
    this.pos += size;
    switch (type) {
      case GGUF_TYPE.UINT8: return b.readUInt8(p);
      case GGUF_TYPE.INT8: return b.readInt8(p);
      case GGUF_TYPE.UINT16: return b.readUInt16LE(p);
      case GGUF_TYPE.INT16: return b.readInt16LE(p);
      case GGUF_TYPE.UINT32: return b.readUInt32LE(p);
      case GGUF_TYPE.INT32: return b.readInt32LE(p);
      case GGUF_TYPE.FLOAT32: return b.readFloatLE(p);
      case GGUF_TYPE.BOOL: return b.readUInt8(p) !== 0;
      case GGUF_TYPE.UINT64: return b.readBigUInt64LE(p);
      case GGUF_TYPE.INT64: return b.readBigInt64LE(p);
      case GGUF_TYPE.FLOAT64: return b.readDoubleLE(p);
    }
    throw new Error(`GGUF: unknown value type ${type} at byte ${p}`);
  }
  /**
   * @param {number} type
   * @returns {GgufValue}
   */
  value(type) {
    if (type !== GGUF_TYPE.ARRAY) return { type, value: this.scalar(type) };
    const itemType = this.u32();
    if (itemType === GGUF_TYPE.ARRAY) throw new Error("GGUF: nested arrays are not supported");
    const n = this.u64();
    const value = new Array(n);
    for (let i = 0; i < n; i++) value[i] = this.scalar(itemType);
    return { type, itemType, value };
  }
}

/**
 * Parses a GGUF file's header: KV pairs (in file order, as a Map key → {type, value, itemType?})
 * and tensor infos. Tensor data is not read.
 * @param {string | Buffer} src a path or the file's bytes
 */
export function readGguf(src) {
  const buf = typeof src === "string" ? readFileSync(src) : src;
  const r = new Reader(buf);
  r.need(4);
  const magic = buf.toString("latin1", 0, 4);
  if (magic !== GGUF_MAGIC) throw new Error(`GGUF: bad magic ${JSON.stringify(magic)}`);
  r.pos = 4;
  const version = r.u32();
  if (version !== 2 && version !== 3) throw new Error(`GGUF: unsupported version ${version}`);
  const nTensors = r.u64();
  const nKv = r.u64();
  /** @type {Map<string, GgufValue>} */
  const kv = new Map();
  for (let i = 0; i < nKv; i++) {
    const key = r.string();
    const type = r.u32();
    if (kv.has(key)) throw new Error(`GGUF: duplicate key ${key}`);
    kv.set(key, r.value(type));
  }
  const tensors = [];
  for (let i = 0; i < nTensors; i++) {
    const name = r.string();
    const nDims = r.u32();
    const dims = [];
    for (let d = 0; d < nDims; d++) dims.push(r.u64());
    const type = r.u32();
    const offset = r.u64();
    tensors.push({ name, dims, type, offset });
  }
  const alignment = Number(kv.get("general.alignment")?.value ?? GGUF_DEFAULT_ALIGNMENT);
  const dataOffset = nTensors > 0 ? pad(r.pos, alignment) : r.pos;
  return { version, alignment, kv, tensors, dataOffset, size: buf.length };
}

/**
 * Plain `{key: value}` view of a KV map (arrays become JS arrays).
 * @param {Map<string, GgufValue>} kv
 */
export function kvToObject(kv) {
  return Object.fromEntries([...kv].map(([k, v]) => [k, v.value]));
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Convenience constructors for typed KV values. */
export const kvString = (/** @type {string | number} */ value) => ({ type: GGUF_TYPE.STRING, value: String(value) });
export const kvU32 = (/** @type {number} */ value) => ({ type: GGUF_TYPE.UINT32, value });
export const kvI32 = (/** @type {number} */ value) => ({ type: GGUF_TYPE.INT32, value });
export const kvF32 = (/** @type {number} */ value) => ({ type: GGUF_TYPE.FLOAT32, value });
export const kvBool = (/** @type {unknown} */ value) => ({ type: GGUF_TYPE.BOOL, value: !!value });
export const kvArray = (/** @type {number} */ itemType, /** @type {GgufScalar[]} */ value) => ({ type: GGUF_TYPE.ARRAY, itemType, value });

/**
 * @param {Buffer} b
 * @param {number} p
 * @param {number} type a numeric or BOOL type (a number for each, but BOOL and the 64-bit ones, which also take a boolean or bigint)
 * @param {GgufScalar} v
 */
function putScalar(b, p, type, v) {
  const n = /** @type {number} */ (v);
  switch (type) {
    case GGUF_TYPE.UINT8: b.writeUInt8(n, p); break;
    case GGUF_TYPE.INT8: b.writeInt8(n, p); break;
    case GGUF_TYPE.UINT16: b.writeUInt16LE(n, p); break;
    case GGUF_TYPE.INT16: b.writeInt16LE(n, p); break;
    case GGUF_TYPE.UINT32: b.writeUInt32LE(n, p); break;
    case GGUF_TYPE.INT32: b.writeInt32LE(n, p); break;
    case GGUF_TYPE.FLOAT32: b.writeFloatLE(n, p); break;
    case GGUF_TYPE.BOOL: b.writeUInt8(v ? 1 : 0, p); break;
    case GGUF_TYPE.UINT64: b.writeBigUInt64LE(BigInt(n), p); break;
    case GGUF_TYPE.INT64: b.writeBigInt64LE(BigInt(n), p); break;
    case GGUF_TYPE.FLOAT64: b.writeDoubleLE(n, p); break;
    default: throw new Error(`GGUF: unknown value type ${type}`);
  }
}

class Writer {
  constructor() {
    /** @type {Buffer[]} */
    this.chunks = [];
    this.length = 0;
  }
  /** @param {Buffer} b */
  push(b) { this.chunks.push(b); this.length += b.length; }
  /** @param {number} v */
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  /** @param {number | bigint} v */
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  /** @param {string} s */
  string(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.push(b); }
  /**
   * @param {number} type
   * @param {GgufScalar} v
   */
  scalar(type, v) {
    if (type === GGUF_TYPE.STRING) return this.string(String(v));
    const size = SCALAR_SIZE[type];
    if (size === undefined) throw new Error(`GGUF: unknown value type ${type}`);
    const b = Buffer.alloc(size);
    putScalar(b, 0, type, v);
    this.push(b);
  }
  /** @param {GgufValue} v */
  value(v) {
    this.u32(v.type);
    if (v.itemType === undefined) return this.scalar(v.type, v.value);
    const { itemType, value } = v;
    this.u32(itemType);
    this.u64(value.length);
    const size = SCALAR_SIZE[itemType];
    if (size === undefined) {
      for (const v of value) this.scalar(itemType, v);
      return;
    }
    // numeric arrays (token types, scores) in one buffer
    const b = Buffer.alloc(size * value.length);
    for (let i = 0; i < value.length; i++) putScalar(b, i * size, itemType, value[i]);
    this.push(b);
  }
  concat() { return Buffer.concat(this.chunks, this.length); }
}

/**
 * Writes a GGUF v3 file atomically (temp file + rename).
 * @param {string} outPath
 * @param {{ kv: Iterable<[string, GgufValue]>,
 *           tensors: Array<{ name: string, dims: number[], type: number, data: Buffer }>,
 *           alignment?: number }} spec  dims in GGUF order (ne0 first)
 * @returns {{ bytes: number, sha256: string }}
 */
export function writeGguf(outPath, { kv, tensors, alignment = GGUF_DEFAULT_ALIGNMENT }) {
  const entries = [...kv];
  const keys = new Set();
  for (const [k] of entries) {
    if (keys.has(k)) throw new Error(`GGUF: duplicate key ${k}`);
    keys.add(k);
  }
  const align = Number(entries.find(([k]) => k === "general.alignment")?.[1].value ?? alignment);
  const h = new Writer();
  h.push(Buffer.from(GGUF_MAGIC, "latin1"));
  h.u32(3);
  h.u64(tensors.length);
  h.u64(entries.length);
  for (const [key, v] of entries) {
    h.string(key);
    h.value(v);
  }
  let offset = 0;
  for (const t of tensors) {
    const elSize = GGML_TYPE_SIZE[t.type];
    if (!elSize) throw new Error(`GGUF: tensor ${t.name}: unsupported ggml type ${t.type}`);
    const n = t.dims.reduce((a, b) => a * b, 1);
    if (t.data.length !== n * elSize) {
      throw new Error(`GGUF: tensor ${t.name}: ${t.data.length} bytes, expected ${n * elSize} for [${t.dims}]`);
    }
    h.string(t.name);
    h.u32(t.dims.length);
    for (const d of t.dims) h.u64(d);
    h.u32(t.type);
    h.u64(offset);
    offset += pad(t.data.length, align);
  }
  const header = h.concat();
  const tmp = `${outPath}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w");
  const hash = createHash("sha256");
  let written = 0;
  const put = (/** @type {Buffer} */ b) => {
    hash.update(b);
    let off = 0;
    while (off < b.length) off += writeSync(fd, b, off, b.length - off);
    written += b.length;
  };
  try {
    put(header);
    put(Buffer.alloc(pad(written, align) - written));
    for (const t of tensors) {
      put(t.data);
      put(Buffer.alloc(pad(t.data.length, align) - t.data.length));
    }
    closeSync(fd);
    renameSync(tmp, outPath);
  } catch (e) {
    try { closeSync(fd); } catch {}
    rmSync(tmp, { force: true });
    throw e;
  }
  return { bytes: written, sha256: hash.digest("hex") };
}

// ---------------------------------------------------------------------------------------------
// Tiny random llama model

/**
 * Deterministic PRNG (mulberry32), uniform in [0, 1).
 * @param {number} seed
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);
/**
 * IEEE half from a JS number (round to nearest even; enough for small random weights).
 * @param {number} x
 */
export function toHalf(x) {
  f32buf[0] = x;
  const bits = /** @type {number} */ (u32buf[0]);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++;
  return sign | half;
}

/**
 * Tensor of `n` uniform values in [-scale, scale), F16 or F32.
 * @param {() => number} rand
 * @param {number} n
 * @param {number} scale
 * @param {number} type
 */
function randomTensor(rand, n, scale, type) {
  if (type === GGML_TYPE.F16) {
    const a = new Uint16Array(n);
    for (let i = 0; i < n; i++) a[i] = toHalf((rand() * 2 - 1) * scale);
    return Buffer.from(a.buffer);
  }
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (rand() * 2 - 1) * scale;
  return Buffer.from(a.buffer);
}

/**
 * @param {number} n
 * @param {number} value
 */
function constTensor(n, value) {
  return Buffer.from(new Float32Array(n).fill(value).buffer);
}

export const TINY_LLAMA_HPARAMS = Object.freeze({
  n_embd: 64,
  n_layer: 2,
  n_head: 4,
  n_head_kv: 2,
  n_ff: 128,
  context_length: 8192,
  rms_eps: 1e-6,
  rope_freq_base: 10000,
});

/**
 * Token ids that end generation (eos, eot, eom and every CONTROL token named like an end marker).
 * @param {Map<string, GgufValue>} vocabKv
 * @param {GgufScalar[]} tokens its tokenizer.ggml.tokens
 */
function endOfGenerationIds(vocabKv, tokens) {
  /** @type {Set<number>} */
  const ids = new Set();
  for (const k of ["tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"]) {
    const v = vocabKv.get(k)?.value;
    if (typeof v === "number") ids.add(v);
  }
  for (let i = 0; i < tokens.length; i++) {
    if (/^<\|(endoftext|im_end|eot_id|end_of_text|end)\|>$/.test(String(tokens[i]))) ids.add(i);
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Writes a tiny random-weight llama-architecture GGUF using the vocabulary (every `tokenizer.*` key)
 * of `vocabPath` and a chat template: the vocab file's own `tokenizer.chat_template` if it has one
 * and `templatePath` is not given, else the file at `templatePath`.
 *
 * The output rows of end-of-generation tokens are zero, so their logit is exactly 0 while random
 * logits of other tokens are larger: unconstrained greedy generation never stops by itself (always
 * send `max_tokens`), and a literal grammar still ends with EOS because at that point EOS is the
 * only legal token. So are the rows of tokens that are only part of a UTF-8 character: a logit of 0
 * is the middle of the random ones, never among the 40 a default sampler keeps.
 *
 * `vocabSize` cuts the vocabulary to that many ordinary tokens (cutVocabulary); without it, all of it.
 *
 * Deterministic: same inputs and seed → same bytes.
 * @param {{ vocabPath: string, templatePath?: string, outPath: string, seed?: number, vocabSize?: number,
 *           name?: string, hparams?: Partial<{ [K in keyof typeof TINY_LLAMA_HPARAMS]: number }> }} opts
 */
export function writeTinyLlamaModel({ vocabPath, templatePath, outPath, seed = 1, name, hparams = {}, vocabSize }) {
  const hp = { ...TINY_LLAMA_HPARAMS, ...hparams };
  const headDim = hp.n_embd / hp.n_head;
  if (!Number.isInteger(headDim)) throw new Error("n_embd must be a multiple of n_head");
  if (hp.n_head % hp.n_head_kv) throw new Error("n_head must be a multiple of n_head_kv");

  const read = readGguf(vocabPath);
  const vocab = vocabSize === undefined ? read : { ...read, kv: new Map([...read.kv].filter(([k]) => !k.startsWith("tokenizer.")).concat([...cutVocabulary(read.kv, vocabSize)])) };
  const tokens = vocab.kv.get("tokenizer.ggml.tokens")?.value;
  if (!Array.isArray(tokens)) throw new Error(`${vocabPath} has no tokenizer.ggml.tokens`);
  const nVocab = tokens.length;

  const fromVocab = vocab.kv.get("tokenizer.chat_template")?.value;
  let chatTemplate = typeof fromVocab === "string" ? fromVocab : undefined;
  let templateSource = "vocab";
  if (templatePath) {
    chatTemplate = readFileSync(templatePath, "utf8");
    templateSource = templatePath;
  }
  if (!chatTemplate) throw new Error(`${vocabPath} has no tokenizer.chat_template; pass templatePath`);

  /** @type {Map<string, GgufValue>} */
  const kv = new Map();
  kv.set("general.architecture", kvString("llama"));
  kv.set("general.type", kvString("model"));
  kv.set("general.name", kvString(name ?? `switchyard tiny random llama (seed ${seed})`));
  kv.set("general.file_type", kvU32(1)); // LLAMA_FTYPE_MOSTLY_F16
  kv.set("general.alignment", kvU32(GGUF_DEFAULT_ALIGNMENT));
  kv.set("llama.vocab_size", kvU32(nVocab));
  kv.set("llama.context_length", kvU32(hp.context_length));
  kv.set("llama.embedding_length", kvU32(hp.n_embd));
  kv.set("llama.block_count", kvU32(hp.n_layer));
  kv.set("llama.feed_forward_length", kvU32(hp.n_ff));
  kv.set("llama.attention.head_count", kvU32(hp.n_head));
  kv.set("llama.attention.head_count_kv", kvU32(hp.n_head_kv));
  kv.set("llama.attention.layer_norm_rms_epsilon", kvF32(hp.rms_eps));
  kv.set("llama.rope.dimension_count", kvU32(headDim));
  kv.set("llama.rope.freq_base", kvF32(hp.rope_freq_base));
  for (const [k, v] of vocab.kv) {
    if (k.startsWith("tokenizer.") && k !== "tokenizer.chat_template") kv.set(k, v);
  }
  kv.set("tokenizer.chat_template", kvString(chatTemplate));

  const rand = mulberry32(seed);
  const F16 = GGML_TYPE.F16;
  const F32 = GGML_TYPE.F32;
  const nEmbdKv = headDim * hp.n_head_kv;
  /** @type {Array<{ name: string, dims: number[], type: number, data: Buffer }>} */
  const tensors = [];
  // dims are GGUF order (ne0 first), as llama.cpp's create_tensor() calls spell them.
  /**
   * @param {string} tname
   * @param {number} ne0
   * @param {number} ne1
   */
  const mat = (tname, ne0, ne1, scale = 1 / Math.sqrt(ne0)) =>
    tensors.push({ name: tname, dims: [ne0, ne1], type: F16, data: randomTensor(rand, ne0 * ne1, scale, F16) });
  const norm = (/** @type {string} */ tname) => tensors.push({ name: tname, dims: [hp.n_embd], type: F32, data: constTensor(hp.n_embd, 1) });

  mat("token_embd.weight", hp.n_embd, nVocab, 1);
  norm("output_norm.weight");
  mat("output.weight", hp.n_embd, nVocab);
  const eog = endOfGenerationIds(vocab.kv, tokens);
  const output = /** @type {(typeof tensors)[number]} */ (tensors.at(-1)).data;
  for (const id of eog) output.fill(0, id * hp.n_embd * 2, (id + 1) * hp.n_embd * 2);
  // Pieces of a UTF-8 character too: free sampling that stops inside one leaves text llama-server's
  // tool-call parser refuses (`…does not match the expected peg-native format`), in 1 of 5 short
  // answers with tools at 4,096 tokens. A literal grammar still picks them where its text needs them.
  const partial = partialUtf8Ids(tokens);
  for (const id of partial) output.fill(0, id * hp.n_embd * 2, (id + 1) * hp.n_embd * 2);
  for (let i = 0; i < hp.n_layer; i++) {
    norm(`blk.${i}.attn_norm.weight`);
    mat(`blk.${i}.attn_q.weight`, hp.n_embd, hp.n_embd);
    mat(`blk.${i}.attn_k.weight`, hp.n_embd, nEmbdKv);
    mat(`blk.${i}.attn_v.weight`, hp.n_embd, nEmbdKv);
    mat(`blk.${i}.attn_output.weight`, hp.n_embd, hp.n_embd);
    norm(`blk.${i}.ffn_norm.weight`);
    mat(`blk.${i}.ffn_gate.weight`, hp.n_embd, hp.n_ff);
    mat(`blk.${i}.ffn_down.weight`, hp.n_ff, hp.n_embd);
    mat(`blk.${i}.ffn_up.weight`, hp.n_embd, hp.n_ff);
  }

  const { bytes, sha256 } = writeGguf(outPath, { kv, tensors });
  return {
    path: outPath,
    bytes,
    sha256,
    seed,
    n_vocab: nVocab,
    hparams: hp,
    tensors: tensors.length,
    eog_ids: eog,
    partial_utf8_tokens: partial.length,
    chat_template_source: templateSource,
  };
}

// CLI: node scripts/gguf-writer.mjs dump FILE   (prints the KV pairs, arrays abbreviated, and tensors)
const [command, file] = import.meta.url === `file://${process.argv[1]}` ? parseArgs({ allowPositionals: true }).positionals : [];
if (command === "dump") {
  if (!file) throw new Error("usage: node scripts/gguf-writer.mjs dump FILE");
  const g = readGguf(file);
  console.log(`GGUF v${g.version}, alignment ${g.alignment}, data at ${g.dataOffset}, ${g.size} bytes`);
  for (const [k, v] of g.kv) {
    let s;
    if (v.itemType !== undefined) {
      s = `[${v.value.length} × type ${v.itemType}] ${JSON.stringify(v.value.slice(0, 5), (_, x) => (typeof x === "bigint" ? String(x) : x))}…`;
    } else {
      s = JSON.stringify(typeof v.value === "bigint" ? String(v.value) : v.value);
      if (s.length > 200) s = s.slice(0, 200) + `… (${s.length} chars)`;
    }
    console.log(`${k} (${v.type}) = ${s}`);
  }
  for (const t of g.tensors) console.log(`tensor ${t.name} [${t.dims}] type ${t.type} @${t.offset}`);
}
