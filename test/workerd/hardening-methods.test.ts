import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, keyedVars } from "./harness.ts";

// Every known path asked with a method it does not take: 405 method_not_allowed with an Allow header
// listing the ones it does (HEAD wherever GET is), before authentication.

const models = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hi` }] } });

/** Each route's path (an example for parameterised ones) and its Allow header. */
const PATHS: Array<[string, string]> = [
  ["/health", "GET, HEAD"],
  ["/", "GET, HEAD"],
  ["/api/hello", "GET, HEAD"],
  ["/metrics", "GET, HEAD"],
  ["/v1/chat/completions", "POST"],
  ["/chat/completions", "POST"],
  ["/v1/models", "GET, HEAD"],
  ["/v1/models/m", "GET, HEAD"],
  ["/v1/models/org/m", "GET, HEAD"],
  ["/v1/tool_calls/rewrite", "POST"],
  ["/v1/responses", "GET, HEAD, POST"], // GET: the Responses WebSocket (426 without the upgrade)
  ["/responses", "GET, HEAD"],
  // compact is also a stored response id to GET/DELETE /v1/responses/{id}
  ["/v1/responses/compact", "GET, HEAD, POST, DELETE"],
  ["/v1/responses/resp_1", "GET, HEAD, DELETE"],
  ["/v1/responses/resp_1/input_items", "GET, HEAD"],
  ["/v1/messages", "POST"],
  ["/v1/messages/count_tokens", "POST"],
  ["/v1/completions", "POST"],
  ["/v1/embeddings", "POST"],
  ["/v1/sessions", "GET, HEAD"],
  ["/v1/sessions/ticket", "POST"],
  ["/v1/sessions/models", "GET, HEAD"],
  ["/v1/admin/keys", "GET, HEAD, POST"],
  ["/v1/admin/keys/key_1", "PATCH, DELETE"],
  ["/v1/admin/keys/key_1/revoke", "POST"],
  ["/v1/admin/usage", "GET, HEAD"],
  ["/v1/admin/status", "GET, HEAD"],
  ["/v1/usage", "GET, HEAD"],
];
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

describe("a wrong method", () => {
  for (const [name, vars] of [["dev without keys", models], ["keyed, no credential sent", keyedVars({ ...models, SWITCHYARD_ENV: "", LLAMA_URL: "https://llama.example.com", SWITCHYARD_CONFIG: "" })]] as const) {
    it(`is 405 method_not_allowed with Allow on every known path (${name})`, async () => {
      for (const [path, allow] of PATHS) {
        const allowed = allow.split(", ");
        for (const method of METHODS.filter((m) => !allowed.includes(m))) {
          const where = `${method} ${path}`;
          const { res } = await call(path, { method }, vars);
          expect(res.status, where).toBe(405);
          expect(res.headers.get("allow"), where).toBe(allow);
          if (method === "HEAD") continue; // no body
          const body = await res.json<any>();
          if (path.startsWith("/v1/messages")) expect(body, where).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
          else expect(body.error, where).toMatchObject({ code: "method_not_allowed", type: "invalid_request_error" });
        }
      }
    });
  }

  it("a right method is not refused as one, and an unknown path stays 404", async () => {
    for (const [path, allow] of PATHS) {
      for (const method of allow.split(", ")) {
        const init = method === "POST" ? { method, json: {} } : { method };
        const { res, done } = await call(path, init, models);
        expect(res.status, `${method} ${path}`).not.toBe(405);
        await res.body?.cancel();
        await done();
      }
    }
    const unknown = await call("/v1/nothing-here", { method: "PUT" }, models);
    expect(unknown.res.status).toBe(404);
    expect(unknown.res.headers.get("allow")).toBeNull();
  });
});
