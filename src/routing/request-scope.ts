// What routing needs of the HTTP request it serves, as plain values rather than Hono's Context: the
// routes make it (src/routes/generate.ts) and every stage takes it, so the pipeline runs and is
// tested without a web framework.
import type { KeyRecord } from "../auth/key-record.ts";
import type { Meter } from "../auth/meter.ts";
import type { EnvVars } from "../config/env-vars.ts";
import type { RunFacts } from "../observability/run-facts.ts";
import type { AttemptTracer } from "../observability/request-trace.ts";
import type { AdmissionClass } from "./admission/service-class.ts";

export interface RequestScope {
  requestId: string;
  /** The id the client sent for its request, when valid: passed upstream as x-client-request-id. */
  clientRequestId?: string;
  env: EnvVars;
  /** The request's key (the auth middleware's principal); undefined without one. */
  key: KeyRecord | undefined;
  /** The key's meter: limits, reservations and usage; undefined without a keyed caller. */
  meter: Meter | undefined;
  /** The client's request signal, where the runtime delivers one: its abort is the client leaving. */
  signal: AbortSignal | undefined;
  /** Keeps work alive past the response (ctx.waitUntil). */
  waitUntil(p: Promise<unknown>): void;
  /** The request's trace, when traces are exported: each attempt is a span of it. */
  trace?: AttemptTracer;
  /** Its class in the admission line: its served `service_tier`, or `batch` for a batch line (default: `default`). */
  serviceClass?: AdmissionClass;
  /** What the request log and the traces learn of the answer (when either is on): the pipeline fills it. */
  facts?: RunFacts;
}
