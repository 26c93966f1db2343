import { DurableObject } from "cloudflare:workers";

/** Browser sessions and the relay (the WebGPU fallback). Until that lands, it serves nothing. */
export class SessionHub extends DurableObject<Env> {
  override async fetch(_request: Request): Promise<Response> {
    return new Response("browser sessions are not available yet", { status: 501 });
  }
}
