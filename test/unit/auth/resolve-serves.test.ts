import { describe, expect, it } from "vitest";
import type { KeyRecord } from "../../../src/auth/key-record.ts";
import { resolveServes } from "../../../src/auth/resolve-serves.ts";

const record = (id: string, name: string, revoked = false): KeyRecord => ({
  id,
  name,
  scopes: ["chat"],
  models: null,
  limits: {},
  browser: null,
  serves: null,
  priority: 0,
  capture: false,
  createdAt: 0,
  revokedAt: revoked ? 1 : null,
});

const keys = [record("key_alice", "alice"), record("key_bob", "bob"), record("key_old", "carol", true), record("key_carol", "carol"), record("key_d1", "dup"), record("key_d2", "dup")];

describe("a serve key's serves: key names or ids, stored as ids", () => {
  it("resolves names and ids to the ids of active keys, once each, in order", () => {
    expect(resolveServes(["bob", "key_alice", "bob"], keys)).toEqual(["key_bob", "key_alice"]);
    // A revoked key's name now names only the active key that has it.
    expect(resolveServes(["carol"], keys)).toEqual(["key_carol"]);
  });

  it("refuses an unknown or revoked entry, and a name several active keys share", () => {
    expect(() => resolveServes(["mallory"], keys)).toThrow(expect.objectContaining({ status: 400, code: "invalid_value", param: "serves" }));
    expect(() => resolveServes(["key_old"], keys)).toThrow(/no active key has the id or name "key_old"/);
    expect(() => resolveServes(["dup"], keys)).toThrow(/belongs to 2 active keys \(key_d1, key_d2\)/);
  });
});
