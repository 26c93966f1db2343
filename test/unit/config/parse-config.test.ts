import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";

describe("parseConfig", () => {
  it("zero config: every model goes to LLAMA_URL (default http://127.0.0.1:8080) in dev", () => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev" });
    expect(r.ok && r.config.models === null && r.config.llamaUrl).toBe("http://127.0.0.1:8080");
  });

  it("accepts a full configuration and fills defaults", () => {
    const r = parseConfig({
      SWITCHYARD_ENV: "dev",
      SWITCHYARD_CONFIG: JSON.stringify({
        models: { qwen: { targets: [{ kind: "llama", url: "https://gpu-1.example.com", apiKeySecret: "GPU1_KEY", strip: ["user"], set: { top_k: 20 } }, { kind: "browser", model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC" }] } },
        limits: { maxBodyBytes: 1000 },
        timeouts: { idleMs: 5000 },
      }),
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.limits.maxBodyBytes).toBe(1000);
    expect(r.config.timeouts.idleMs).toBe(5000);
    expect(r.config.timeouts.responseStartMs).toBeGreaterThan(0);
    expect(r.config.models?.qwen?.targets).toHaveLength(2);
  });

  it("names the field and the problem for an invalid configuration", () => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { qwen: { targets: [{ kind: "llama", url: "ftp://x" }] } }, timeout: {} }) });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.problems.map((p) => `${p.field} ${p.message}`).join("\n");
    expect(text).toContain("models.qwen.targets[0].url must be an http:// or https:// URL");
    expect(text).toContain('unknown key "timeout"');
  });

  it("names a missing or wrong kind", () => {
    const r = parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { a: { targets: [{ kind: "ollama", url: "http://x" }] } } }) });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]!.message).toContain('"kind"');
  });

  it("refuses invalid JSON with a clear message", () => {
    const r = parseConfig({ SWITCHYARD_CONFIG: "{models:" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatchObject({ field: "SWITCHYARD_CONFIG" });
  });

  it("refuses a loopback or private upstream when deployed, and says how to reach a GPU box", () => {
    for (const url of ["http://127.0.0.1:8080", "http://localhost:8080", "http://10.0.0.5:8080", "http://192.168.1.2", "http://[::1]:8080"]) {
      const r = parseConfig({ LLAMA_URL: url });
      expect(r.ok, url).toBe(false);
      if (!r.ok) expect(r.problems[0]!.message).toContain("Cloudflare Tunnel");
    }
    expect(parseConfig({ LLAMA_URL: "https://gpu.example.com" }).ok).toBe(true);
  });

  it("queue.shared: on where deployed (many isolates), off under npm start (one isolate); a value set wins either way", () => {
    const shared = (env: Parameters<typeof parseConfig>[0]) => {
      const r = parseConfig(env);
      if (!r.ok) throw new Error(JSON.stringify(r.problems));
      return r.config.queue;
    };
    expect(shared({ LLAMA_URL: "https://gpu.example.com" })).toEqual({ maxWaitMs: 30_000, shared: true });
    expect(shared({ SWITCHYARD_ENV: "dev" })).toEqual({ maxWaitMs: 30_000, shared: false });
    expect(shared({ LLAMA_URL: "https://gpu.example.com", SWITCHYARD_CONFIG: JSON.stringify({ queue: { shared: false } }) }).shared).toBe(false);
    expect(shared({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ queue: { shared: true, maxWaitMs: 5 } }) })).toEqual({ maxWaitMs: 5, shared: true });
  });
});
