import { describe, expect, it } from "vitest";
import { call, createKey, keyedVars } from "./harness.ts";

// The failed-login guard counts per address. Deployed, the address is CF-Connecting-IP (Cloudflare's
// edge sets it); locally the client can send any CF-Connecting-IP, so every local client shares one
// bucket and inventing an address does not get a locked-out client back in.

const deployed = { SWITCHYARD_ENV: "", LLAMA_URL: "https://llama.example.com", SWITCHYARD_CONFIG: "" };

async function lockOut(vars: Record<string, unknown>, ip: string) {
  let last = 0;
  for (let i = 0; i < 22; i++) {
    const { res } = await call("/v1/usage", { headers: { authorization: `Bearer sy-guess${i}${"x".repeat(37)}`, "cf-connecting-ip": ip } }, vars);
    last = res.status;
  }
  expect(last).toBe(429);
}

describe("the address failed logins are counted against", () => {
  it("locally (SWITCHYARD_ENV=dev): a locked-out client stays locked out under any invented CF-Connecting-IP", async () => {
    const vars = keyedVars({ SWITCHYARD_ENV: "dev" });
    const key = await createKey(vars, { name: "real", scopes: ["chat"] });
    await lockOut(vars, "198.51.100.10");
    for (const ip of ["198.51.100.11", "203.0.113.99", ""]) {
      const { res } = await call("/v1/usage", { headers: { authorization: `Bearer ${key.key}`, ...(ip ? { "cf-connecting-ip": ip } : {}) } }, vars);
      expect(res.status, ip || "no header").toBe(429);
      expect((await res.json<any>()).error.code).toBe("too_many_failed_authentications");
    }
  });

  it("deployed: per CF-Connecting-IP; another address is unaffected", async () => {
    const vars = keyedVars(deployed);
    const key = await createKey(vars, { name: "real", scopes: ["chat"] });
    await lockOut(vars, "198.51.100.20");
    const same = await call("/v1/usage", { headers: { authorization: `Bearer ${key.key}`, "cf-connecting-ip": "198.51.100.20" } }, vars);
    expect(same.res.status).toBe(429);
    const other = await call("/v1/usage", { headers: { authorization: `Bearer ${key.key}`, "cf-connecting-ip": "198.51.100.21" } }, vars);
    expect(other.res.status).toBe(200);
  });
});
