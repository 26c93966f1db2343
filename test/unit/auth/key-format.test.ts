import { describe, expect, it } from "vitest";
import { generateKey, generateKeyId, hashKey, looksLikeKey, sameSecret } from "../../../src/auth/key-format.ts";
import { clientAddress, presentedCredential } from "../../../src/auth/credential.ts";
import { parseScopes, scopeFor } from "../../../src/auth/scopes.ts";

describe("key format", () => {
  it("is sy- and 32 random bytes in base64url, never repeated", () => {
    const keys = new Set(Array.from({ length: 200 }, generateKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(looksLikeKey(k)).toBe(true);
      expect(k.length).toBe(3 + 43);
    }
    expect(generateKeyId()).toMatch(/^key_[A-Za-z0-9_-]{12}$/);
  });

  it("hashes to hex SHA-256", async () => {
    expect(await hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("compares secrets whole", () => {
    expect(sameSecret("sy-abc", "sy-abc")).toBe(true);
    expect(sameSecret("sy-abc", "sy-abd")).toBe(false);
    expect(sameSecret("sy-abc", "sy-abcd")).toBe(false);
    expect(sameSecret("", "x")).toBe(false);
  });
});

describe("presented credential", () => {
  it("reads Bearer, then x-api-key; a non-Bearer Authorization is kept whole so it fails", () => {
    expect(presentedCredential(new Headers({ authorization: "Bearer sy-1" }))).toBe("sy-1");
    expect(presentedCredential(new Headers({ authorization: "bearer   sy-1  " }))).toBe("sy-1");
    expect(presentedCredential(new Headers({ "x-api-key": "sy-2" }))).toBe("sy-2");
    expect(presentedCredential(new Headers({ authorization: "Basic abc" }))).toBe("Basic abc");
    expect(presentedCredential(new Headers())).toBeNull();
  });

  it("takes the address from CF-Connecting-IP only", () => {
    expect(clientAddress(new Headers({ "cf-connecting-ip": "203.0.113.9", "x-forwarded-for": "1.2.3.4" }))).toBe("203.0.113.9");
    expect(clientAddress(new Headers({ "x-forwarded-for": "1.2.3.4" }))).toBe("unknown");
  });
});

describe("scopes", () => {
  it("maps every kind of route to its scope (each route declares its kind in src/app.ts)", () => {
    expect(scopeFor("generate")).toBe("chat");
    expect(scopeFor("chat")).toBe("chat");
    expect(scopeFor("serve")).toBe("serve");
    expect(scopeFor("admin")).toBe("admin");
    expect(scopeFor("self")).toBeNull();
    expect(scopeFor("public")).toBeNull();
  });

  it("parses a scope list and names unknown ones", () => {
    expect(parseScopes(["chat", " serve", "chat", "root"])).toEqual({ scopes: ["chat", "serve"], unknown: ["root"] });
  });
});
