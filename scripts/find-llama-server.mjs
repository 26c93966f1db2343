// Where a llama-server binary comes from: LLAMA_SERVER_BIN, the PATH, or the test harness's build.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { llamaCache } from "./llama-cache.mjs";

export function findLlamaServerBinary() {
  if (process.env.LLAMA_SERVER_BIN) return existsSync(process.env.LLAMA_SERVER_BIN) ? process.env.LLAMA_SERVER_BIN : null;
  const onPath = spawnSync("sh", ["-c", "command -v llama-server"], { encoding: "utf8" }).stdout.trim();
  if (onPath) return onPath;
  const cached = llamaCache().bin;
  return existsSync(cached) ? cached : null;
}

export function llamaServerHelp() {
  return [
    "Set LLAMA_SERVER_BIN=/path/to/llama-server, put llama-server on the PATH,",
    "or build one from the bundled llama.cpp source (≈10 minutes once): node scripts/llama-server-build.mjs",
  ];
}
