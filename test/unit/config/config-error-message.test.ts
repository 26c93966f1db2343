import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { configErrorMessages } from "../../../src/config/config-error-message.ts";

// A misconfigured deployment's 500 is answered to anyone (before the key is checked): it names the
// field and the fix, never a configured value; the log keeps the whole text.

function messages(env: Record<string, unknown>) {
  const r = parseConfig(env);
  if (r.ok) throw new Error("expected problems");
  return configErrorMessages(r.problems, env);
}

describe("configErrorMessages", () => {
  it("a private target URL: the field and the fix, not the URL; the log has it", () => {
    const env = { SWITCHYARD_CONFIG: JSON.stringify({ models: { qwen: { targets: [{ kind: "llama", url: "http://10.20.30.40:8080" }] } } }), LLAMA_URL: "https://llama.example.com" };
    const m = messages(env);
    expect(m.public).toContain("models.qwen.targets[0].url");
    expect(m.public).toContain("loopback or private address");
    expect(m.public).toContain("Cloudflare Tunnel");
    expect(m.public).not.toContain("10.20.30.40");
    expect(m.log).toContain("http://10.20.30.40:8080");
  });

  it("an invalid LLAMA_URL is not quoted", () => {
    const m = messages({ LLAMA_URL: "ftp://internal-box.corp:21" });
    expect(m.public).toContain("LLAMA_URL");
    expect(m.public).not.toContain("internal-box");
  });

  it("SWITCHYARD_CONFIG that is not JSON: none of it is repeated (the parse error quotes it)", () => {
    const m = messages({ SWITCHYARD_CONFIG: "http://secret-host.internal:9000" });
    expect(m.public).toContain("SWITCHYARD_CONFIG is not valid JSON");
    expect(m.public).not.toContain("secret-host");
  });

  it("a schema problem still says what is wrong (it names types and bounds, not values)", () => {
    const m = messages({ SWITCHYARD_CONFIG: JSON.stringify({ models: { qwen: { targets: [] } } }) });
    expect(m.public).toContain("needs at least 1 item");
  });
});
