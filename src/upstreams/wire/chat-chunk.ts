// The shapes of OpenAI's chat wire as the servers that speak it send them (llama-server, vLLM,
// SGLang, Ollama, LM Studio, a gateway), only what the proxy reads: one `chat.completion.chunk` of a
// stream, and a whole `chat.completion`.
import type { Timings } from "../../events/events.ts";

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** One `chat.completion.chunk`. */
export interface ChatChunk {
  object?: string;
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    delta?: {
      content?: string | null;
      /** DeepSeek's, SGLang's, llama.cpp's and older vLLM's name for the reasoning. */
      reasoning_content?: string | null;
      /** Current vLLM's and Ollama's name for it. */
      reasoning?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }> | null;
    } | null;
  }> | null;
  usage?: ChatUsage | null;
  /** llama.cpp's (on the usage chunk or the finish chunk), and a gateway's in front of one. */
  timings?: Timings;
  /** An error frame (`{"error":…}`, or older vLLM's `{"object":"error",…}`): each kind reads its own. */
  error?: unknown;
}

/** A whole `chat.completion`: a server that answered without streaming. */
export interface ChatCompletion {
  object?: string;
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    message?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string | Record<string, unknown> } }> | null;
    } | null;
  }> | null;
  usage?: ChatUsage | null;
  timings?: Timings;
  error?: unknown;
}
