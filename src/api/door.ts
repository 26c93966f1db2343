// What each generating API's door (src/api/<surface>/index.ts) hands the one route helper
// (src/routes/generate.ts), which runs every generating request the same way: the body checked by the
// API's schema, its chat run by the pipeline (src/routing/pipeline.ts), the answer encoded as SSE or
// as one JSON body in the API's wire format, and, for an API with an error shape of its own
// (Messages), every failure in that shape.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import type { ServiceTier } from "../auth/service-tier.ts";
import type { ProxyError } from "../errors/proxy-error.ts";
import type { JsonResponseOptions } from "../responders/json-response.ts";
import type { StreamResponseOptions } from "../responders/sse-response.ts";
import type { ChatRun, RunOptions } from "../routing/pipeline.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";

/** A generating API, as the route helper serves it; `R` is its validated request. */
export interface GeneratingApi<R> {
  /** The parsed body as this API's request (its schema, its llama-server fields): the first problem a 400 naming the field. */
  validate(body: unknown): R;
  /**
   * The request as the chat pipeline runs it, and how its answer is encoded. It may wait (a stored
   * conversation, the sealer) but must not start anything that a failure would have to undo: the
   * run starts after it.
   */
  open(request: R, c: Context<AppEnv>): Opened | Promise<Opened>;
  /** Every failure before the answer began, in this API's own shape; without it, the app's error envelope (src/app.ts onError). */
  refuse?(err: ProxyError, c: Context<AppEnv>): Response;
}

/** A request opened by its API: the chat it asks for, and its encoding once the run exists. */
export interface Opened {
  chat: ChatRequest;
  options?: RunOptions;
  /** The `service_tier` its body asked for (the APIs that define one: bodyTier in service-tier.ts); absent: `default`. */
  tier?: ServiceTier;
  /** `served`: the tier that serves it, what the answer's `service_tier` says (a batch line's: `default`). */
  encode(run: ChatRun, served: ServiceTier): Encoding;
}

/** What the run does not give the responders: the SSE encoder, or the JSON aggregator and body (and this API's error shapes). */
export type Encoding = Omit<StreamResponseOptions, keyof ChatRun["common"]> | Omit<JsonResponseOptions, keyof ChatRun["common"]>;
