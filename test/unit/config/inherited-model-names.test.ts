import { describe, expect, it } from "vitest";
import { minToolCallScore, modelConfig, parseConfig, type Config } from "../../../src/config/config.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { planTargets } from "../../../src/routing/plan-targets.ts";

// A model name is client text: names of Object.prototype's members must not find anything.
const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

function config(extra: Record<string, unknown> = {}): Config {
  const r = parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [{ kind: "llama", url: "http://127.0.0.1:8080" }] } }, ...extra }) });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

describe("model names that are Object.prototype members", () => {
  it.each(INHERITED)("planTargets(%s) is 404 model_not_found", (name) => {
    let thrown: unknown;
    try {
      planTargets(config(), name);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ProxyError);
    expect((thrown as ProxyError).status).toBe(404);
    expect((thrown as ProxyError).code).toBe("model_not_found");
    expect((thrown as ProxyError).message).toContain('Available: "m"');
  });

  it.each(INHERITED)("the declared models and tool-call policies find no %s, not even by plain indexing", (name) => {
    const c = config({ toolCalls: { minScore: 0.25, models: { m: { minScore: 0.5 } } } });
    expect(modelConfig(c, name)).toBeUndefined();
    expect(c.models?.[name]).toBeUndefined();
    expect(c.models?.[name]?.balance).toBeUndefined();
    expect(c.toolCalls.models[name]).toBeUndefined();
    expect(minToolCallScore(c, name)).toBe(0.25);
    expect(minToolCallScore(c, "m")).toBe(0.5);
  });

  it("a model that is declared under such a name is found", () => {
    const c = config({ models: { constructor: { targets: [{ kind: "browser", model: "x" }] } } });
    expect(planTargets(c, "constructor").map((t) => t.kind)).toEqual(["browser"]);
    expect(modelConfig(c, "toString")).toBeUndefined();
  });

  it("zero config has no declared models to find", () => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev" });
    expect(r.ok && modelConfig(r.config, "constructor")).toBeUndefined();
  });
});
