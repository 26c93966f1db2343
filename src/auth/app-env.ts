// What Hono gives every handler here: the Worker's bindings and the per-request variables.
import type { KeyRecord } from "./key-record.ts";
import type { Meter } from "./meter.ts";

/** Hono's environment for this app: Worker bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The caller's team key (unset in open mode). */
    principal?: KeyRecord;
    /** Limits and usage of a keyed request (unset in open mode). */
    meter?: Meter;
  };
}
