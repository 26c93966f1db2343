/** Hono's environment for this app: Worker bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: { requestId: string };
}
