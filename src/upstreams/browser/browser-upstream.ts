import type { SessionHub } from "../../durable/session-hub.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { BrowserTarget } from "../../schemas/config.ts";
import type { UpstreamEvent } from "../../stream/events.ts";
import { randomId } from "../../stream/random-id.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { adaptForWebLlm } from "./adapt-for-web-llm.ts";
import { relayEvents } from "./relay-events.ts";

/** The one SessionHub instance every Worker isolate talks to. */
export function sessionHub(env: Record<string, unknown>): DurableObjectStub<SessionHub> {
  const ns = env.SESSION_HUB as DurableObjectNamespace<SessionHub> | undefined;
  if (!ns) throw new ProxyError({ status: 500, type: "server_error", code: "config_error", message: "The SESSION_HUB Durable Object binding is missing from wrangler.toml." });
  return ns.getByName("hub");
}

/** A browser session running web-llm, reached through the SessionHub relay. */
export class BrowserUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: BrowserTarget,
  ) {}

  async open(request: ChatRequest, ctx: AttemptContext): Promise<ReadableStream<UpstreamEvent>> {
    const body = adaptForWebLlm(request, this.target.model);
    const hub = sessionHub(ctx.env);
    const id = randomId("rl_", 16);
    let res: Response;
    try {
      res = await hub.fetch("https://hub/relay", { method: "POST", body: JSON.stringify({ id, model: this.target.model, body }) });
    } catch (e) {
      throw new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: `The session hub could not be reached (${e instanceof Error ? e.message : String(e)}).` });
    }
    if (!res.ok || !res.body) {
      const err = (await res.json().catch(() => ({}))) as { status?: number; code?: string; message?: string; retryAfter?: number };
      throw new ProxyError({
        status: err.status ?? 502,
        code: err.code ?? "upstream_error",
        message: err.message ?? `The session hub answered HTTP ${res.status}.`,
        ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}),
        retryable: true,
      });
    }
    // The client leaving, a timeout or an abandoned attempt: a queued request is dropped by the hub,
    // a running one is interrupted in the page.
    const cancel = () => {
      hub.cancel(id).catch(() => {});
    };
    if (ctx.signal.aborted) cancel();
    ctx.signal.addEventListener("abort", cancel, { once: true });
    return res.body.pipeThrough(new TextDecoderStream()).pipeThrough(relayEvents(this.name));
  }
}
