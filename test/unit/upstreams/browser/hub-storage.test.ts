import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HubStorage, TICKET_TTL_MS } from "../../../../src/upstreams/browser/hub-storage.ts";

// HubStorage on a real SQLite storage: a SessionHub instance of its own (not "hub"), used only for its storage.
const withStorage = <T>(name: string, f: (s: HubStorage) => T) => runInDurableObject(env.SESSION_HUB.getByName(`hub-storage-${name}`), (_hub, state) => f(new HubStorage(state.storage.sql)));

describe("session tickets", () => {
  it("one use: the grant it was issued with, then nothing", async () => {
    await withStorage("once", (s) => {
      const grant = { keyId: "serve_1", serves: ["key_a"] };
      const { ticket, expiresInMs } = s.issueTicket(grant, 1000);
      expect(ticket).toMatch(/^tk_/);
      expect(expiresInMs).toBe(TICKET_TTL_MS);
      expect(s.redeemTicket(ticket, 1000)).toEqual(grant);
      expect(s.redeemTicket(ticket, 1000)).toBeNull();
      expect(s.redeemTicket("tk_unknown", 1000)).toBeNull();
    });
  });

  it("valid for TICKET_TTL_MS, not a millisecond more", async () => {
    await withStorage("ttl", (s) => {
      const grant = { keyId: null, serves: null };
      expect(s.redeemTicket(s.issueTicket(grant, 1000).ticket, 1000 + TICKET_TTL_MS)).toEqual(grant);
      expect(s.redeemTicket(s.issueTicket(grant, 1000).ticket, 1000 + TICKET_TTL_MS + 1)).toBeNull();
    });
  });
});

describe("a serve key's changes, applied to a grant at connect", () => {
  it("no change: the grant as sent; serves changed: the new list; revoked: none", async () => {
    await withStorage("changes", (s) => {
      const sent = { keyId: "serve_1", serves: ["key_a"] };
      expect(s.grantAtConnect(sent)).toEqual(sent);
      s.recordChange("serve_1", { revoked: false, serves: ["key_b"] });
      expect(s.grantAtConnect(sent)).toEqual({ keyId: "serve_1", serves: ["key_b"] });
      s.recordChange("serve_1", { revoked: false, serves: null });
      expect(s.grantAtConnect(sent)).toEqual({ keyId: "serve_1", serves: null });
      s.recordChange("serve_1", { revoked: true });
      expect(s.grantAtConnect(sent)).toBeNull();
      // Another key, and the SERVE_TOKEN's grant (no key), are not touched.
      expect(s.grantAtConnect({ keyId: "serve_2", serves: null })).toEqual({ keyId: "serve_2", serves: null });
      expect(s.grantAtConnect({ keyId: null, serves: null })).toEqual({ keyId: null, serves: null });
    });
  });

  it("a revocation is final: a later change of serves does not undo it", async () => {
    await withStorage("final", (s) => {
      s.recordChange("serve_1", { revoked: true });
      s.recordChange("serve_1", { revoked: false, serves: ["key_a"] });
      expect(s.changeOf("serve_1")).toEqual({ revoked: true });
      expect(s.grantAtConnect({ keyId: "serve_1", serves: null })).toBeNull();
    });
  });
});
