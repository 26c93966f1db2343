import { describe, expect, it } from "vitest";
import { mayServe, parseGrant, SERVES_EVERYONE } from "../../../../src/upstreams/browser/serve-grant.ts";

describe("a session's grant: whose requests it may take", () => {
  it("serves null: every request, keyed or not", () => {
    expect(mayServe({ keyId: "key_laptop", serves: null }, "key_alice")).toBe(true);
    expect(mayServe({ keyId: null, serves: null }, undefined)).toBe(true);
    expect(mayServe(SERVES_EVERYONE, "key_bob")).toBe(true);
    // A socket accepted before grants existed carries none: it keeps serving everyone.
    expect(mayServe(undefined, "key_bob")).toBe(true);
  });

  it("a serves list: only those key ids; never a request without a key, nor the serve key's own unless listed", () => {
    const grant = { keyId: "key_laptop", serves: ["key_alice", "key_bob"] };
    expect(mayServe(grant, "key_alice")).toBe(true);
    expect(mayServe(grant, "key_bob")).toBe(true);
    expect(mayServe(grant, "key_carol")).toBe(false);
    expect(mayServe(grant, undefined)).toBe(false);
    expect(mayServe(grant, "key_laptop")).toBe(false);
    expect(mayServe({ keyId: null, serves: [] }, "key_alice")).toBe(false);
  });

  it("reads what the Worker wrote; anything else admits nobody", () => {
    expect(parseGrant(JSON.stringify({ keyId: "key_x", serves: ["key_a"] }))).toEqual({ keyId: "key_x", serves: ["key_a"] });
    expect(parseGrant(JSON.stringify({ keyId: null, serves: null }))).toEqual({ keyId: null, serves: null });
    for (const bad of [null, "", "not json", "{}", '{"serves": "key_a"}', '{"serves": [1]}']) {
      const g = parseGrant(bad);
      expect(g.serves, String(bad)).toEqual([]);
      expect(mayServe(g, "key_a")).toBe(false);
    }
  });
});
