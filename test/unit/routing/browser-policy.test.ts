import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/config.ts";
import { parseConfig } from "../../../src/config/config.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { applyBrowserPolicy, browserPolicy } from "../../../src/routing/plan-targets.ts";
import { planTargets, planTargetsFor } from "../../../src/routing/plan-targets.ts";
import type { KeyRecord } from "../../../src/auth/key-record.ts";

function config(models: Record<string, unknown> | undefined, browser?: Record<string, unknown>, env: "dev" | "" = "dev"): Config {
  const r = parseConfig({ SWITCHYARD_ENV: env, LLAMA_URL: "https://gpu.example.com", SWITCHYARD_CONFIG: JSON.stringify({ ...(models ? { models } : {}), ...(browser ? { browser } : {}) }) });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

const key = (browser: KeyRecord["browser"]): KeyRecord => ({
  id: "key_alice00000",
  name: "alice",
  scopes: ["chat"],
  models: null,
  limits: {},
  browser,
  serves: null,
  priority: 0,
  capture: false,
  createdAt: 0,
  revokedAt: null,
});

const mixed = { m: { targets: [{ kind: "browser", model: "B" }, { kind: "llama", url: "https://gpu.example.com" }, { kind: "browser", model: "C" }] } };
const browserOnly = { m: { targets: [{ kind: "browser", model: "B" }] } };

describe("the browser policy of a request", () => {
  it("is the key's own, else the deployment's default (requests without a key too)", () => {
    expect(browserPolicy(config(undefined, { default: "allow" }), key("deny"))).toBe("deny");
    expect(browserPolicy(config(undefined, { default: "deny" }), key("allow"))).toBe("allow");
    expect(browserPolicy(config(undefined, { default: "deny" }), key(null))).toBe("deny");
    expect(browserPolicy(config(undefined, { default: "allow" }), undefined)).toBe("allow");
    expect(browserPolicy(config(undefined, undefined, ""), undefined)).toBe("deny");
    expect(browserPolicy(config(undefined), key(null))).toBe("allow");
  });
});

describe("the plan under the policy", () => {
  it("allowed: unchanged", () => {
    const c = config(mixed);
    expect(planTargetsFor(c, "m", key("allow"))).toEqual(planTargets(c, "m"));
  });

  it("denied: every browser target is left out, the rest keep their order", () => {
    expect(planTargetsFor(config(mixed), "m", key("deny")).map((t) => t.name)).toEqual(["llama:gpu.example.com"]);
  });

  it("denied in zero config: the llama-server without the implicit browser fallback", () => {
    const c = config(undefined, { default: "deny" });
    expect(planTargets(c, "any").map((t) => t.kind)).toEqual(["llama", "browser"]);
    expect(planTargetsFor(c, "any", undefined).map((t) => t.kind)).toEqual(["llama"]);
  });

  it("denied with only browser targets: 403 browser_not_allowed, saying why and how to fix it", () => {
    const refusal = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as ProxyError;
      }
      throw new Error("not refused");
    };
    const own = refusal(() => planTargetsFor(config(browserOnly), "m", key("deny")));
    expect(own).toBeInstanceOf(ProxyError);
    expect(own).toMatchObject({ status: 403, code: "browser_not_allowed", type: "permission_error", param: "model" });
    expect(own.message).toContain('The key "alice" may not be served by browser sessions (its browser policy is "deny")');
    expect(own.message).toContain("npm run keys -- update key_alice00000 --browser allow");
    const byDefault = refusal(() => planTargetsFor(config(browserOnly, { default: "deny" }), "m", key(null)));
    expect(byDefault.message).toContain("browser.default");
    const keyless = refusal(() => applyBrowserPolicy(planTargets(config(browserOnly), "m"), "deny", "m", undefined));
    expect(keyless.message).toContain("Requests without a key");
  });

  it("an unknown model is still 404 model_not_found, whatever the policy", () => {
    expect(() => planTargetsFor(config(browserOnly), "nope", key("deny"))).toThrow(expect.objectContaining({ code: "model_not_found" }));
  });
});
