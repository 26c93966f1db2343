import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";

const parse = (browser: unknown, env: "dev" | "" = "dev") =>
  parseConfig({ SWITCHYARD_ENV: env, LLAMA_URL: "https://gpu.example.com", SWITCHYARD_CONFIG: JSON.stringify({ browser }) });

describe("browser: which requests browser sessions may serve", () => {
  it("defaults to allow under npm start (dev) and to deny deployed; serve-token sessions serve everyone", () => {
    const dev = parseConfig({ SWITCHYARD_ENV: "dev" });
    const deployed = parseConfig({ SWITCHYARD_ENV: "", LLAMA_URL: "https://gpu.example.com" });
    expect(dev.ok && dev.config.browser).toEqual({ default: "allow", serveTokenServes: null });
    expect(deployed.ok && deployed.config.browser).toEqual({ default: "deny", serveTokenServes: null });
  });

  it("takes an explicit default either way, and key ids for SERVE_TOKEN sessions", () => {
    const allow = parse({ default: "allow" }, "");
    expect(allow.ok && allow.config.browser.default).toBe("allow");
    const deny = parse({ default: "deny", serveTokenServes: ["key_AAAAAAAAAAAA"] });
    expect(deny.ok && deny.config.browser).toEqual({ default: "deny", serveTokenServes: ["key_AAAAAAAAAAAA"] });
  });

  it.each([
    [{ default: "maybe" }, "browser.default"],
    [{ defualt: "deny" }, 'unknown key "defualt"'],
    [{ serveTokenServes: ["alice"] }, "browser.serveTokenServes[0]"],
    [{ serveTokenServes: [] }, "browser.serveTokenServes"],
  ])("refuses %j, naming the field", (browser, field) => {
    const r = parse(browser);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.field} ${p.message}`).join("\n")).toContain(field);
  });
});
