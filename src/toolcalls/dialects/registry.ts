// The one table of dialects: every family whose markers or openings the scanner reads, each from its
// own file in this folder (its markers, what they open, its openers, its region's end when special,
// its parser). The scanner's tables (marker-table.ts, opener-table.ts) and the tokens a raw
// completion keeps (output-markers.ts) are built from it; the order does not matter (the longest
// marker at a position wins, and openers are asked by their order numbers).
//
// Openings that carry a value, or no marker at all, are each dialect's `openers` (dialect.ts,
// Opener): the characters one starts at, where it is asked, its order number and its reader, all in
// its file; scan/classify-at.ts asks them through opener-table.ts: harmony headers (harmony.ts),
// `<function=NAME>` (qwen3-coder.ts), `<invoke name=…>` (minimax.ts), `>>>NAME` (functionary.ts),
// `Action:` fences (command-r.ts), bare JSON and ` functools[` (json.ts), bare pythonic calls
// (pythonic.ts). A new dialect is one file here and one line below. Bodies
// without a marker of their own are read where their hosts' bodies are: GLM (glm.ts) and the
// others inside <tool_call> by auto-body.ts, MiniCPM's <param>s (minicpm.ts) by qwen3-coder.ts.

import { apriel } from "./apriel.ts";
import { commandR } from "./command-r.ts";
import { common } from "./common.ts";
import { deepseek } from "./deepseek.ts";
import type { Dialect } from "./dialect.ts";
import { functionaryDialect } from "./functionary.ts";
import { gemma } from "./gemma.ts";
import { harmony } from "./harmony.ts";
import { hermes } from "./hermes.ts";
import { hunyuan } from "./hunyuan.ts";
import { internlm } from "./internlm.ts";
import { json } from "./json.ts";
import { kimiK3 } from "./kimi-k3.ts";
import { kimi } from "./kimi.ts";
import { lfm2 } from "./lfm2.ts";
import { llama } from "./llama.ts";
import { minimaxM3 } from "./minimax-m3.ts";
import { minimax } from "./minimax.ts";
import { mistral } from "./mistral.ts";
import { muse } from "./muse.ts";
import { olmo } from "./olmo.ts";
import { pythonicDialect } from "./pythonic.ts";
import { qwen3Coder } from "./qwen3-coder.ts";
import { seedOss } from "./seed-oss.ts";
import { solar } from "./solar.ts";

export const DIALECTS: readonly Dialect[] = [
  common,
  hermes,
  json,
  llama,
  mistral,
  deepseek,
  kimi,
  kimiK3,
  hunyuan,
  solar,
  commandR,
  internlm,
  lfm2,
  olmo,
  gemma,
  minimax,
  minimaxM3,
  seedOss,
  muse,
  harmony,
  apriel,
  qwen3Coder,
  functionaryDialect,
  pythonicDialect,
];
