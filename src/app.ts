import { Hono } from "hono";
import type { AppEnv } from "./app-env.ts";
import { loadConfig } from "./config/load-config.ts";
import { errorResponse, toProxyError } from "./errors/error-envelope.ts";
import { ProxyError } from "./errors/proxy-error.ts";
import { randomId } from "./stream/random-id.ts";
import { chatCompletions } from "./routes/chat-completions.ts";
import { getModel, listModels } from "./routes/models.ts";
import { rewriteToolCallsRoute } from "./routes/tool-calls-rewrite.ts";
import { responses } from "./routes/responses.ts";
import { compactResponses } from "./routes/responses-compact.ts";
import { deleteStoredResponse, getStoredResponse, listInputItems } from "./routes/stored-responses.ts";
import { countTokens, messages } from "./routes/messages.ts";
import { completions } from "./routes/completions.ts";
import { embeddings } from "./routes/embeddings.ts";
import { connectSession, issueSessionTicket } from "./routes/sessions.ts";
import { authMiddleware } from "./auth/middleware.ts";
import { corsMiddleware } from "./auth/cors.ts";
import { authMode } from "./auth/principal.ts";
import { metrics } from "./routes/metrics.ts";
import { status } from "./routes/status.ts";
import { adminUsage, createKey, listKeys, revokeKey } from "./routes/admin.ts";
import { ownUsage } from "./routes/usage.ts";

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && /^[A-Za-z0-9._:-]{1,128}$/.test(incoming) ? incoming : randomId("req_", 20);
    c.set("requestId", id);
    await next();
    c.res.headers.set("x-request-id", id);
  });

  app.use(corsMiddleware());
  app.use(authMiddleware());

  app.get("/health", async (c) => {
    loadConfig(c.env);
    // Public: status and how requests are authenticated, nothing more.
    const auth = await authMode(c.env);
    return c.json({ status: "ok", auth, ...(auth === "open" && c.env.SWITCHYARD_ENV === "dev" ? { note: "dev mode with no API keys: serving without keys" } : {}) });
  });

  // Probes: Claude Code sends HEAD <base>/api/hello to warm the connection; HEAD / is a reachability
  // check. Hono answers HEAD with the GET route. `/` is the browser page (assets); if it reaches the
  // Worker, the page comes from the assets binding.
  app.get("/", async (c) => {
    if (!c.env.ASSETS) return c.body(null, 200);
    const page = await c.env.ASSETS.fetch(c.req.raw);
    return new Response(page.body, page); // the binding's headers are immutable; the middleware adds its own
  });
  app.get("/api/hello", (c) => c.json({ status: "ok" }));
  app.post("/v1/chat/completions", chatCompletions);
  app.post("/chat/completions", chatCompletions);
  app.get("/v1/models", listModels);
  app.get("/v1/models/:id{.+}", getModel);
  app.post("/v1/tool_calls/rewrite", rewriteToolCallsRoute);
  app.post("/v1/responses", responses);
  app.post("/v1/responses/compact", compactResponses);
  app.get("/v1/responses/:id/input_items", listInputItems);
  app.get("/v1/responses/:id", getStoredResponse);
  app.delete("/v1/responses/:id", deleteStoredResponse);
  app.post("/v1/messages/count_tokens", countTokens);
  app.post("/v1/messages", messages);
  app.post("/v1/completions", completions);
  app.post("/v1/embeddings", embeddings);
  app.get("/v1/sessions", connectSession);
  app.post("/v1/sessions/ticket", issueSessionTicket);
  app.post("/v1/admin/keys", createKey);
  app.get("/v1/admin/keys", listKeys);
  app.delete("/v1/admin/keys/:id", revokeKey);
  app.post("/v1/admin/keys/:id/revoke", revokeKey);
  app.get("/v1/admin/usage", adminUsage);
  app.get("/v1/admin/status", status);
  app.get("/metrics", metrics);
  app.get("/v1/usage", ownUsage);
  app.all("/v1/chat/completions", () => {
    throw new ProxyError({ status: 405, code: "method_not_allowed", message: "Use POST for /v1/chat/completions." });
  });

  app.notFound((c) =>
    errorResponse(new ProxyError({ status: 404, code: "not_found", message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}. See docs/api.md for the endpoints.` })),
  );
  app.onError((err, c) => {
    const e = toProxyError(err);
    const res = errorResponse(e);
    if (e.attempts !== undefined) res.headers.set("x-switchyard-attempts", String(e.attempts));
    return res;
  });
  return app;
}
