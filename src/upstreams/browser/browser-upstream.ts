// Chat on a browser session: how the Worker reaches the SessionHub and relays one request to a page.
import type { RelayStart } from "./relay-dispatch.ts";
import type { SessionHub } from "./session-hub.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { BrowserTarget } from "../../config/config-schema.ts";
import { durableNamespace, type EnvVars } from "../../config/env-vars.ts";
import type { Endpoint } from "../../schemas/relay.ts";
import { randomId } from "../../lib/ids.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import { TargetUnableError, type AttemptContext, type Upstream } from "../upstream.ts";
import { adaptForWebLlm } from "./adapt-for-web-llm.ts";
import { relayEvents } from "./relay-events.ts";

/** The one SessionHub instance every Worker isolate talks to. */
export function sessionHub(env: EnvVars): DurableObjectStub<SessionHub> {
  return durableNamespace<SessionHub>(env, "SESSION_HUB").getByName("hub");
}

/** The hub refused because no session serves this endpoint with the model at all: the target is skipped, not tried. */
export class BrowserUnableError extends TargetUnableError {}

/**
 * Relays one request to a browser session through the hub: the hub's answer (the page's messages as
 * JSON lines). Cancelled in the hub when `ctx.signal` aborts (a queued request is dropped, a running
 * one is interrupted in the page).
 */
export async function openRelay(endpoint: Endpoint, model: string, body: Record<string, unknown>, ctx: AttemptContext): Promise<ReadableStream<Uint8Array>> {
  const hub = sessionHub(ctx.env);
  const id = randomId("rl_", 16);
  const start: RelayStart = {
    id,
    model,
    ...(endpoint === "chat" ? {} : { endpoint }),
    body,
    ...(endpoint === "chat" && ctx.promptChain?.length ? { prompt: [...ctx.promptChain] } : {}),
    ...(endpoint === "chat" && ctx.promptTokens !== undefined ? { promptTokens: ctx.promptTokens } : {}),
    ...(ctx.keyId !== undefined ? { keyId: ctx.keyId } : {}),
  };
  // Listening before the hub answers: it may hold the request a moment (a session loading the model).
  const cancel = () => {
    hub.cancel(id).catch(() => {});
  };
  ctx.signal.addEventListener("abort", cancel, { once: true });
  let res: Response;
  try {
    res = await hub.fetch("https://hub/relay", { method: "POST", body: JSON.stringify(start) });
  } catch (e) {
    ctx.signal.removeEventListener("abort", cancel);
    throw new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: `The session hub could not be reached (${e instanceof Error ? e.message : String(e)}).` });
  }
  if (!res.ok || !res.body) {
    ctx.signal.removeEventListener("abort", cancel);
    const err = (await res.json().catch(() => ({}))) as { status?: number; code?: string; message?: string; retryAfter?: number; unable?: boolean; busy?: boolean };
    const init = {
      status: err.status ?? 502,
      code: err.code ?? "upstream_error",
      message: err.message ?? `The session hub answered HTTP ${res.status}.`,
      ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}),
      retryable: true,
      ...(err.busy === true ? { busy: true } : {}),
    };
    throw err.unable ? new BrowserUnableError(init) : new ProxyError(init);
  }
  if (ctx.signal.aborted) cancel();
  return res.body;
}

/** A browser session running web-llm, or llama.cpp for a target with `gguf`, reached through the SessionHub relay. */
export class BrowserUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: BrowserTarget,
  ) {}

  async open(request: ChatRequest, ctx: AttemptContext): Promise<EventStreamReader> {
    const body = adaptForWebLlm(request, this.target.model, this.target.gguf ? "llama.cpp" : "web-llm");
    const out = await openRelay("chat", this.target.model, body, ctx);
    return relayEvents(out, this.name);
  }
}
