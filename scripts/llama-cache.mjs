// Where the llama-server build and llama.cpp's model files (vocab GGUFs, chat templates) are cached:
// outside the repository, keyed by the node-llama-cpp version that carries the source.
import { homedir } from "node:os";
import { join } from "node:path";

export const NODE_LLAMA_CPP_VERSION = "3.21.1";

/** The folder of every slow build the tests cache: $SWITCHYARD_CACHE, else ~/.cache/switchyard. */
export const cacheBase = () => process.env.SWITCHYARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "switchyard");

export function llamaCache() {
  const root = join(cacheBase(), `llama-server-${NODE_LLAMA_CPP_VERSION}`);
  return {
    root,
    bin: join(root, "bin/llama-server"),
    vocab: join(root, "models/ggml-vocab-qwen2.gguf"),
    templates: join(root, "models/templates"),
  };
}
