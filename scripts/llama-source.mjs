// llama.cpp's source, as it ships inside node-llama-cpp's npm tarball (a git bundle), checked out into a
// working directory. Both the llama-server build and the chat-parser fixture export start from it, so the
// binary the tests run and the cases the rewriter is tuned on come from the same commit.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { NODE_LLAMA_CPP_VERSION } from "./llama-cache.mjs";

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {import("node:child_process").SpawnSyncOptions} [opts]
 */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed with ${r.status ?? r.signal}`);
  }
}

/**
 * Packs node-llama-cpp (not installed), clones its bundle into `work/llama.cpp`; returns that path and the commit.
 * @param {string} work
 * @param {(msg: string) => void} [log]
 */
export function fetchLlamaSource(work, log = () => {}) {
  log(`fetching node-llama-cpp@${NODE_LLAMA_CPP_VERSION} (source only, not installed)…`);
  run("npm", ["pack", `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, "--silent"], { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  run("tar", ["xzf", `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`, "package/llama/gitRelease.bundle"], { cwd: work });
  log("cloning llama.cpp from the bundle…");
  const src = join(work, "llama.cpp");
  run("git", ["-c", "advice.detachedHead=false", "clone", "--quiet", join(work, "package/llama/gitRelease.bundle"), src]);
  const commit = spawnSync("git", ["-C", src, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim();
  return { src, commit };
}

/**
 * Configures a Release build of `src` with cmake: static, portable, no network code; tests only when asked.
 * @param {string} src
 */
export function configureLlama(src, { tests = false } = {}) {
  run("cmake", [
    "-S", src, "-B", join(src, "build"),
    "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DGGML_NATIVE=OFF",
    "-DBUILD_SHARED_LIBS=OFF", `-DLLAMA_BUILD_TESTS=${tests ? "ON" : "OFF"}`, "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_TOOLS=ON",
  ], { stdio: ["ignore", "ignore", "inherit"] });
}
