import { describe, expect, it } from "vitest";
import { call, createKey, keyedVars } from "./harness.ts";

// Deployed with an invalid configuration: the public /health says only that (no URL, no field), and
// every API route answers 500 config_error naming the field and the fix, before any refusal of the
// caller (no keys yet, or no key sent).

const LOOPBACK = { SWITCHYARD_ENV: "", LLAMA_URL: "http://127.0.0.1:8080", SWITCHYARD_CONFIG: "" };
const PRIVATE_TARGET = { SWITCHYARD_ENV: "", LLAMA_URL: "https://llama.example.com", SWITCHYARD_CONFIG: JSON.stringify({ models: { qwen: { targets: [{ kind: "llama", url: "http://10.20.30.40:8080" }] } } }) };
const messages = [{ role: "user", content: "hi" }];

const ROUTES: Array<[string, RequestInit & { json?: unknown }]> = [
  ["/v1/chat/completions", { json: { model: "m", messages } }],
  ["/chat/completions", { json: { model: "m", messages } }],
  ["/v1/responses", { json: { model: "m", input: "hi" } }],
  ["/v1/responses/compact", { json: { model: "m", input: "hi" } }],
  ["/v1/responses/resp_1", {}],
  ["/v1/messages", { json: { model: "m", max_tokens: 8, messages } }],
  ["/v1/messages/count_tokens", { json: { model: "m", messages } }],
  ["/v1/completions", { json: { model: "m", prompt: "hi" } }],
  ["/v1/embeddings", { json: { model: "m", input: "hi" } }],
  ["/v1/models", {}],
  ["/v1/models/m", {}],
  ["/v1/tool_calls/rewrite", { json: { tools: [], text: "hi" } }],
  ["/v1/usage", {}],
];

describe("an invalid configuration, deployed", () => {
  for (const [name, config, internal, field] of [
    ["a loopback LLAMA_URL", LOOPBACK, ["127.0.0.1", "LLAMA_URL"], "LLAMA_URL"],
    ["a private target URL", PRIVATE_TARGET, ["10.20.30.40", "qwen", "SWITCHYARD_CONFIG", "targets"], "models.qwen.targets[0].url"],
  ] as const) {
    it(`${name}: /health is 503 {status: "config_error", auth} and names nothing internal`, async () => {
      const vars = keyedVars(config);
      const { res } = await call("/health", {}, vars);
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(JSON.parse(text)).toEqual({ status: "config_error", auth: "locked" });
      for (const s of internal) expect(text, s).not.toContain(s);
    });

    it(`${name}: every API route is 500 config_error, before no_keys_configured or a missing key`, async () => {
      const locked = keyedVars(config);
      const keyed = keyedVars(config);
      await createKey(keyed, { name: "alice", scopes: ["chat"] });
      for (const vars of [locked, keyed]) {
        for (const [path, init] of ROUTES) {
          const { res } = await call(path, init, vars);
          const body = await res.json<any>();
          expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(500);
          if (path.startsWith("/v1/messages")) expect(body.error.type, path).toBe("api_error");
          else expect(body.error.code, path).toBe("config_error");
          // Answered before any key is checked: the field and the fix, never the configured URL.
          expect(body.error.message, path).toContain(field);
          expect(body.error.message, path).not.toContain(internal[0]);
        }
      }
    });
  }

  it("a valid configuration: /health is 200 ok as before", async () => {
    const { res } = await call("/health", {}, keyedVars({ ...LOOPBACK, LLAMA_URL: "https://llama.example.com" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", auth: "locked" });
  });
});
