// What a team key is as stored and listed, and the shape of its usage rows and reports.
import type { BrowserPolicy } from "../config/config-schema.ts";
import type { KeyLimits } from "./limit-math.ts";
import type { Scope } from "./scopes.ts";
import type { ServiceTier } from "./service-tier.ts";

/** A team key as stored and listed: everything but the secret (only its hash is kept, elsewhere). */
export interface KeyRecord {
  id: string;
  name: string;
  scopes: Scope[];
  /** Model allow-list; null: every model. */
  models: string[] | null;
  limits: KeyLimits;
  /** Whether its requests may be served by a browser session; null: the deployment's `browser.default`. */
  browser: BrowserPolicy | null;
  /** A `serve` key: the key ids whose requests its sessions take; null: every key's (and keyless ones). */
  serves: string[] | null;
  /** Its requests' level in the admission queue: higher is served first when they wait; 0 by default. */
  priority: number;
  /**
   * The highest `service_tier` its requests are served at (src/routing/admission/service-class.ts):
   * `flex`, `default` (the default) or `priority`. Asking above it is served at it.
   */
  maxServiceTier?: ServiceTier;
  /**
   * The request log keeps its requests' bodies and answers, as `observability.capture` does for every
   * request (while the log is on); its responses say so (`x-switchyard-capture: on`). Set by an admin only; false by default.
   */
  capture: boolean;
  createdAt: number;
  revokedAt: number | null;
}

export interface UsageRow {
  day: string;
  model: string;
  backend: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  errors: number;
}

/** One request's outcome, reported when it ends. */
export interface UsageReport {
  leaseId?: string;
  model: string;
  backend: string;
  promptTokens: number;
  completionTokens: number;
  error: boolean;
}

/** A key's `priority` lies within ±this (the admin API refuses others); the queue keeps the level above it for itself. */
export const KEY_PRIORITY_MAX = 1000;
