// Service tiers (docs/api.md, "Service tiers"): what a request may ask in `service_tier`, what a key
// may be served at (its `maxServiceTier`), and the tier that serves it. Pure.
/** The tiers a request may ask for and a key may be allowed, lowest first. */
export const SERVICE_TIERS = ["flex", "default", "priority"] as const;
export type ServiceTier = (typeof SERVICE_TIERS)[number];

/**
 * The tier a request asked for, as one of SERVICE_TIERS: OpenAI's `auto`, `default` and `scale`
 * and Anthropic's `auto` and `standard_only` are `default`; `fast` is `priority`; absent is `default`.
 * Anything else is undefined (the caller answers 400).
 */
export function askedTier(value: unknown): ServiceTier | undefined {
  if (value === undefined || value === null) return "default";
  switch (value) {
    case "flex":
      return "flex";
    case "priority":
    case "fast":
      return "priority";
    case "auto":
    case "default":
    case "scale":
    case "standard_only":
      return "default";
    default:
      return undefined;
  }
}

/**
 * The tier a request is served at: the one it asked for, capped at its key's `maxServiceTier`. As
 * OpenAI does for a project without priority access, asking above the cap is not an error: the
 * request is served at the cap, and the answer's `service_tier` says so.
 */
export function servedTier(asked: ServiceTier, max: ServiceTier): ServiceTier {
  return SERVICE_TIERS.indexOf(asked) <= SERVICE_TIERS.indexOf(max) ? asked : max;
}

/** A key's `maxServiceTier` as stored (null, or anything unknown: `default`). */
export function maxTierOf(value: unknown): ServiceTier {
  return value === "flex" || value === "priority" ? value : "default";
}
