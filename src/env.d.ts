// Secrets and variables that are not in wrangler.toml's [vars] (so `wrangler types` cannot see them).
declare global {
  interface Env {
    SWITCHYARD_CONFIG?: string;
    SWITCHYARD_ENV?: string;
    OPEN_MODE?: string;
    ADMIN_TOKEN?: string;
    SERVE_TOKEN?: string;
    /** Upstream keys are read by the name given in a target's `apiKeySecret`. */
    [secret: string]: unknown;
  }
}
export {};
