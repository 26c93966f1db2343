// Where the llama-server build and llama.cpp's model files (vocab GGUFs, chat templates) are cached:
// outside the repository, keyed by the node-llama-cpp version that carries the source.
import { homedir } from "node:os";
import { join } from "node:path";

export const NODE_LLAMA_CPP_VERSION = "3.21.1";

export function llamaCache() {
  const base = process.env.SWITCHYARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "switchyard");
  const root = join(base, `llama-server-${NODE_LLAMA_CPP_VERSION}`);
  return {
    root,
    bin: join(root, "bin/llama-server"),
    vocab: join(root, "models/ggml-vocab-qwen2.gguf"),
    templates: join(root, "models/templates"),
  };
}
