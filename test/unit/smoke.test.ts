import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";

describe("worker", () => {
  it("answers /health", async () => {
    const res = await exports.default.fetch("http://x/health");
    expect(res.status).toBe(200);
  });
});
