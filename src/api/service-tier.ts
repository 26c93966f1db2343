// A body's `service_tier` (chat, Responses, Messages; docs/api.md, "Service tiers") as the tier it
// asks for: each API's spellings mapped (src/auth/service-tier.ts), anything else a 400 naming it.
import { askedTier, type ServiceTier } from "../auth/service-tier.ts";
import { ProxyError } from "../errors/proxy-error.ts";

/** The tier a body's `service_tier` asks for (absent: `default`); 400 for a value no API defines. */
export function bodyTier(body: object): ServiceTier {
  const value = (body as { service_tier?: unknown }).service_tier;
  const tier = askedTier(value);
  if (tier) return tier;
  throw new ProxyError({ status: 400, code: "invalid_value", param: "service_tier", message: `service_tier ${JSON.stringify(value)} is not one of "auto", "default", "flex", "priority" (docs/api.md, "Service tiers").` });
}
