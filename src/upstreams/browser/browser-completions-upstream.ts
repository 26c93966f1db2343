// Legacy text completions (`/v1/completions`) on a browser session as internal events.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { BrowserTarget } from "../../config/config-schema.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { openRelay } from "./browser-upstream.ts";
import { relayEvents } from "./relay-events.ts";

/**
 * Pure: a validated `/v1/completions` request → a body web-llm 0.2.86's `engine.completions.create`
 * accepts: `prompt` a string (a one-string array is unwrapped; token arrays are not supported by
 * web-llm's completions), `model` the session's model, always streaming with usage; `user` and
 * `best_of` (rejected by web-llm with UnsupportedFieldsError; best_of is 1 here) and `n` are dropped;
 * `suffix` is refused (web-llm cannot fill in the middle); the legacy `logprobs: N` becomes web-llm's
 * `logprobs: true` with `top_logprobs: N`.
 */
export function adaptCompletionForWebLlm(req: Record<string, unknown>, model: string): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req };
  let prompt = req.prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === "string") prompt = prompt[0];
  if (typeof prompt !== "string") {
    throw new ProxyError({ status: 400, code: "unsupported_content", param: "prompt", retryable: true, message: "Browser sessions take the prompt as text only, not as token ids." });
  }
  if (req.suffix != null) {
    throw new ProxyError({ status: 400, code: "unsupported_parameter", param: "suffix", retryable: true, message: "Browser sessions (web-llm) do not support suffix." });
  }
  delete body.suffix;
  delete body.user;
  delete body.best_of;
  delete body.n;
  delete body.logprobs;
  if (typeof req.logprobs === "number") {
    body.logprobs = true;
    body.top_logprobs = req.logprobs;
  }
  body.prompt = prompt;
  body.model = model;
  body.stream = true;
  body.stream_options = { include_usage: true };
  return body;
}

/** `/v1/completions` on a browser session (engine.completions.create through the relay) as internal events. */
export class BrowserCompletionsUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: BrowserTarget,
    private readonly body: Record<string, unknown>,
  ) {}

  /** The chat request argument is unused: this upstream serves the text completion it was made for. */
  async open(_chat: unknown, ctx: AttemptContext): Promise<EventStreamReader> {
    const body = adaptCompletionForWebLlm(this.body, this.target.model);
    const out = await openRelay("completions", this.target.model, body, ctx);
    return relayEvents(out, this.name);
  }
}
