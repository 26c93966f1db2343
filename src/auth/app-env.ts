// What Hono gives every handler here: the Worker's bindings and the per-request variables.
import type { RequestTrace } from "../observability/request-trace.ts";
import type { RunFacts } from "../observability/run-facts.ts";
import type { KeyRecord } from "./key-record.ts";
import type { Meter } from "./meter.ts";

/** Hono's environment for this app: Worker bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    /** Switchyard's id for the request (`x-request-id`). */
    requestId: string;
    /** The id the client sent (`x-client-request-id` or `x-request-id`), when valid: logged beside `requestId` and echoed. */
    clientRequestId?: string;
    /** The caller's team key (unset in open mode). */
    principal?: KeyRecord;
    /** Limits and usage of a keyed request (unset in open mode). */
    meter?: Meter;
    /** What the request log and the traces learn of the answer (set while either is on). */
    facts?: RunFacts;
    /** The request's trace (set while traces are exported). */
    trace?: RequestTrace;
  };
}
