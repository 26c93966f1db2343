import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL } from "./harness.ts";

// Every public route that takes a model name, with names of Object.prototype's members: 404
// model_not_found (in the route's error shape), never a 500, when SWITCHYARD_CONFIG declares models.

const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hi` }] } });
const messages = [{ role: "user", content: "hi" }];

const ROUTES: Array<[string, (model: string) => RequestInit & { json?: unknown }]> = [
  ["/v1/chat/completions", (model) => ({ json: { model, messages } })],
  ["/chat/completions", (model) => ({ json: { model, messages, stream: true } })],
  ["/v1/responses", (model) => ({ json: { model, input: "hi" } })],
  ["/v1/responses/compact", (model) => ({ json: { model, input: "hi" } })],
  ["/v1/messages", (model) => ({ json: { model, max_tokens: 16, messages } })],
  ["/v1/messages/count_tokens", (model) => ({ json: { model, messages } })],
  ["/v1/completions", (model) => ({ json: { model, prompt: "hi" } })],
  ["/v1/embeddings", (model) => ({ json: { model, input: "hi" } })],
];

describe("model names inherited from Object.prototype", () => {
  for (const name of INHERITED) {
    it(`"${name}": 404 model_not_found on every route that takes a model`, async () => {
      for (const [path, init] of ROUTES) {
        const { res, done } = await call(path, init(name), vars);
        await done();
        const body = await res.json<any>();
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(404);
        // Anthropic's shape on /v1/messages*: {type: "error", error: {type: "not_found_error", message}}.
        if (path.startsWith("/v1/messages")) expect(body.error.type, path).toBe("not_found_error");
        else expect(body.error.code, path).toBe("model_not_found");
      }
      const { res } = await call(`/v1/models/${encodeURIComponent(name)}`, {}, vars);
      expect(res.status).toBe(404);
      expect((await res.json<any>()).error.code).toBe("model_not_found");
    });
  }
});
