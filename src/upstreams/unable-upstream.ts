import { ProxyError } from "../errors/proxy-error.ts";
import type { Target } from "../routing/target.ts";
import type { Upstream } from "./upstream.ts";

/** An upstream for a target that cannot serve this endpoint: skipped like a busy one (no_capacity). */
export function unableUpstream(target: Target, endpoint: string): Upstream {
  return {
    name: target.name,
    open: () =>
      Promise.reject(
        new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: `${target.name} cannot serve ${endpoint}, and no other target for this model could.` }),
      ),
  };
}
