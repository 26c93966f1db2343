import { describe, expect, it } from "vitest";
import { clientAddress, LOCAL_ADDRESS, presentedCredential, readCredential } from "../../../src/auth/credential.ts";

describe("readCredential", () => {
  it("takes a Bearer Authorization or x-api-key as the key", () => {
    expect(readCredential(new Headers({ authorization: "Bearer sy-1" }))).toEqual({ kind: "key", value: "sy-1" });
    expect(readCredential(new Headers({ authorization: "bearer   sy-1  " }))).toEqual({ kind: "key", value: "sy-1" });
    expect(readCredential(new Headers({ "x-api-key": " sy-2 " }))).toEqual({ kind: "key", value: "sy-2" });
    expect(readCredential(new Headers())).toEqual({ kind: "none" });
    expect(readCredential(new Headers({ authorization: " ", "x-api-key": "" }))).toEqual({ kind: "none" });
  });

  it("an Authorization that is not Bearer is malformed, never a key — even with an x-api-key beside it", () => {
    for (const value of ["sy-1", "Basic abc", "Token sy-1", "Bearer", "Bearer a b", "Bearersy-1"]) {
      expect(readCredential(new Headers({ authorization: value })), value).toEqual({ kind: "malformed" });
    }
    expect(readCredential(new Headers({ authorization: "sy-1", "x-api-key": "sy-1" }))).toEqual({ kind: "malformed" });
  });

  it("presentedCredential (an anonymous caller's identity) still tells malformed headers apart", () => {
    expect(presentedCredential(new Headers({ authorization: "Basic abc" }))).toBe("Basic abc");
    expect(presentedCredential(new Headers({ authorization: "Bearer sy-1" }))).toBe("sy-1");
    expect(presentedCredential(new Headers())).toBeNull();
  });
});

describe("clientAddress", () => {
  const headers = new Headers({ "cf-connecting-ip": "203.0.113.9", "x-forwarded-for": "1.2.3.4" });
  it("deployed: CF-Connecting-IP, which Cloudflare's edge sets", () => {
    expect(clientAddress(headers, { SWITCHYARD_ENV: "" })).toBe("203.0.113.9");
    expect(clientAddress(new Headers({ "x-forwarded-for": "1.2.3.4" }), {})).toBe("unknown");
  });

  it("locally (SWITCHYARD_ENV=dev): one shared address, whatever the client sends", () => {
    expect(clientAddress(headers, { SWITCHYARD_ENV: "dev" })).toBe(LOCAL_ADDRESS);
    expect(clientAddress(new Headers(), { SWITCHYARD_ENV: "dev" })).toBe(LOCAL_ADDRESS);
  });
});
