// The Worker's HTTP app: every route in one table, and what each request passes through before its
// handler (request id, CORS, 405 for a wrong method, authentication and limits).
import { Hono, type Context } from "hono";
import type { AppEnv } from "./auth/app-env.ts";
import { loadConfig } from "./config/load-config.ts";
import { chatApi } from "./api/chat/index.ts";
import { completionsApi } from "./api/completions/index.ts";
import { anthropicErrorResponse, messagesApi } from "./api/messages/index.ts";
import { compactApi, responsesApi } from "./api/responses/index.ts";
import { errorResponse, toProxyError } from "./errors/error-envelope.ts";
import { ProxyError } from "./errors/proxy-error.ts";
import { generate } from "./routes/generate.ts";
import { isolateState } from "./routing/isolate/isolate-state.ts";
import { getModel, listModels } from "./routes/models.ts";
import { rewriteToolCallsRoute } from "./routes/tool-calls-rewrite.ts";
import { responsesSocket } from "./routes/responses-socket.ts";
import { deleteStoredResponse, getStoredResponse, listInputItems } from "./routes/stored-responses.ts";
import { countTokens } from "./routes/count-tokens.ts";
import { embeddings } from "./routes/embeddings.ts";
import { connectSession, issueSessionTicket, listOfferedModels } from "./routes/sessions.ts";
import { authMiddleware } from "./middleware/auth.ts";
import type { RouteKind } from "./auth/scopes.ts";
import { corsMiddleware } from "./middleware/cors.ts";
import { authMode } from "./auth/principal.ts";
import { metrics } from "./routes/metrics.ts";
import { status } from "./routes/status.ts";
import { adminUsage, createKey, listKeys, revokeKey, updateKey } from "./routes/admin.ts";
import { ownUsage } from "./routes/usage.ts";
import { getRequest, listRequests, observabilityStatus } from "./routes/admin-requests.ts";
import { observeRequests } from "./middleware/observe-requests.ts";
import { requestIds } from "./middleware/request-id.ts";
import { deleteFile, fileContent, getFile, listFiles, uploadFile } from "./routes/files.ts";
import { cancelBatch, createBatch, getBatch, listBatches } from "./routes/batches.ts";

/**
 * Public: status and how requests are authenticated, nothing more. An invalid configuration is `503
 * {"status": "config_error"}` without saying what is wrong: that names internal URLs, so it is told on
 * the API routes (a 500 config_error naming the field and the fix) and in the Worker's log.
 */
async function health(c: Context<AppEnv>): Promise<Response> {
  const auth = await configured(() => authMode(c.env));
  const config = await configured(() => loadConfig(c.env));
  if (auth === null || config === null) return c.json({ status: "config_error", ...(auth ? { auth } : {}) }, 503);
  return c.json({ status: "ok", auth, ...(auth === "open" && c.env.SWITCHYARD_ENV === "dev" ? { note: "dev mode with no API keys: serving without keys" } : {}) });
}

/** `run`'s result, or null when it fails for a configuration error. */
async function configured<T>(run: () => T | Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof ProxyError && e.code === "config_error") return null;
    throw e;
  }
}

// Probes: Claude Code sends HEAD <base>/api/hello to warm the connection; HEAD / is a reachability
// check. Hono answers HEAD with the GET route. `/` is the browser page (assets); if it reaches the
// Worker, the page comes from the assets binding.
async function page(c: Context<AppEnv>): Promise<Response> {
  if (!c.env.ASSETS) return c.body(null, 200);
  const res = await c.env.ASSETS.fetch(c.req.raw);
  return new Response(res.body, res); // the binding's headers are immutable; the middleware adds its own
}

type Method = "GET" | "POST" | "PATCH" | "DELETE";

// Every generating API through one handler (src/routes/generate.ts), by its door (src/api/<surface>/index.ts).
const chatCompletions = generate(chatApi);

/**
 * Every route: the one table the router, the 405 answer (its Allow header) and each route's
 * authentication and limits are built from. A route's kind (src/auth/scopes.ts) is declared here, next
 * to its handler: "generate" for every route that runs a model, so each holds a concurrency slot.
 */
const ROUTES: ReadonlyArray<readonly [Method, string, RouteKind, (c: Context<AppEnv>) => Response | Promise<Response>]> = [
  ["GET", "/health", "public", health],
  ["GET", "/", "public", page],
  ["GET", "/api/hello", "public", (c) => c.json({ status: "ok" })],
  ["POST", "/v1/chat/completions", "generate", chatCompletions],
  ["POST", "/chat/completions", "generate", chatCompletions],
  ["GET", "/v1/models", "chat", listModels],
  ["GET", "/v1/models/:id{.+}", "chat", getModel],
  ["POST", "/v1/tool_calls/rewrite", "chat", rewriteToolCallsRoute],
  ["POST", "/v1/responses", "generate", generate(responsesApi)],
  // The socket needs the key's chat scope; each response sent over it is its own generating request.
  ["GET", "/v1/responses", "chat", (c) => responsesSocket(c, dispatchWithin(c))],
  ["GET", "/responses", "chat", (c) => responsesSocket(c, dispatchWithin(c))],
  ["POST", "/v1/responses/compact", "generate", generate(compactApi)],
  ["GET", "/v1/responses/:id/input_items", "chat", listInputItems],
  ["GET", "/v1/responses/:id", "chat", getStoredResponse],
  ["DELETE", "/v1/responses/:id", "chat", deleteStoredResponse],
  ["POST", "/v1/messages/count_tokens", "chat", countTokens],
  ["POST", "/v1/messages", "generate", generate(messagesApi)],
  ["POST", "/v1/completions", "generate", generate(completionsApi)],
  ["POST", "/v1/embeddings", "generate", embeddings],
  ["GET", "/v1/sessions", "serve", connectSession],
  ["POST", "/v1/sessions/ticket", "serve", issueSessionTicket],
  ["GET", "/v1/sessions/models", "serve", listOfferedModels],
  ["POST", "/v1/admin/keys", "admin", createKey],
  ["GET", "/v1/admin/keys", "admin", listKeys],
  ["PATCH", "/v1/admin/keys/:id", "admin", updateKey],
  ["DELETE", "/v1/admin/keys/:id", "admin", revokeKey],
  ["POST", "/v1/admin/keys/:id/revoke", "admin", revokeKey],
  ["GET", "/v1/admin/usage", "admin", adminUsage],
  ["GET", "/v1/admin/status", "admin", status],
  ["GET", "/v1/admin/requests", "admin", listRequests],
  ["GET", "/v1/admin/requests/:id", "admin", getRequest],
  ["GET", "/v1/admin/observability", "admin", observabilityStatus],
  // The Batch API (docs/api.md, "Batches"): its lines run later, each its own generating request.
  ["POST", "/v1/files", "chat", uploadFile],
  ["GET", "/v1/files", "chat", listFiles],
  ["GET", "/v1/files/:id/content", "chat", fileContent],
  ["GET", "/v1/files/:id", "chat", getFile],
  ["DELETE", "/v1/files/:id", "chat", deleteFile],
  ["POST", "/v1/batches", "chat", createBatch],
  ["GET", "/v1/batches", "chat", listBatches],
  ["GET", "/v1/batches/:id", "chat", getBatch],
  ["POST", "/v1/batches/:id/cancel", "chat", cancelBatch],
  ["GET", "/metrics", "public", metrics],
  ["GET", "/v1/usage", "self", ownUsage],
];

let socketApp: Hono<AppEnv> | undefined;
/** A request made inside the Worker (a response sent over a socket) run through the whole app, with the socket's env and context. */
const dispatchWithin = (c: Context<AppEnv>) => async (request: Request): Promise<Response> => (socketApp ??= createApp()).fetch(request, c.env, c.executionCtx);

/** A route's path as a regular expression: `:name` is one segment, `:name{.+}` the rest of the path. */
function pathPattern(path: string): RegExp {
  const segments = path.split("/").map((s) => (!s.startsWith(":") ? s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : s.endsWith("{.+}") ? ".+" : "[^/]+"));
  return new RegExp(`^${segments.join("/")}$`);
}

const PATTERNS = ROUTES.map(([method, path]) => ({ method, pattern: pathPattern(path) }));
const METHOD_ORDER = ["GET", "HEAD", "POST", "PATCH", "DELETE"];

/** The methods some route takes at `path` (HEAD wherever GET is: Hono answers it with the GET route); none for an unknown path. */
export function allowedMethods(path: string): string[] {
  return STATIC_ALLOWED.get(path) ?? matchAllowed(path);
}

function matchAllowed(path: string): string[] {
  const methods = new Set<string>();
  for (const { method, pattern } of PATTERNS) {
    if (!pattern.test(path)) continue;
    methods.add(method);
    if (method === "GET") methods.add("HEAD");
  }
  return METHOD_ORDER.filter((m) => methods.has(m));
}

// Every request asks: the fixed paths (the hot ones among them) are answered from a table made once.
const STATIC_ALLOWED = new Map(ROUTES.filter(([, path]) => !path.includes(":")).map(([, path]) => [path, matchAllowed(path)] as const));

const isMessagesPath = (path: string) => path === "/v1/messages" || path.startsWith("/v1/messages/");

export function createApp(): Hono<AppEnv> {
  // The isolate's routing state (ledger, pool, admission line), its listeners on the hub registered.
  isolateState();
  const app = new Hono<AppEnv>();

  // What wraps every request (src/middleware/): its id, CORS, then (below) the 405, the request log
  // and traces, and each route's authentication and limits.
  app.use(requestIds());
  app.use(corsMiddleware());

  // A known path asked with another method: 405 naming the ones it takes, before authentication (a
  // wrong method is no failed login). A CORS preflight was answered above when CORS is on.
  app.use(async (c, next) => {
    const allowed = allowedMethods(c.req.path);
    if (allowed.length === 0 || allowed.includes(c.req.method)) return next();
    const err = new ProxyError({ status: 405, code: "method_not_allowed", message: `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.filter((m) => m !== "HEAD").join(" or ")}.` });
    const res = isMessagesPath(c.req.path) ? anthropicErrorResponse(err, undefined, c.get("requestId")) : errorResponse(err);
    res.headers.set("allow", allowed.join(", "));
    return res;
  });

  // The request log and traces: each generating request as its client got it (src/observability/).
  app.use(observeRequests());

  // Anthropic clients get Anthropic's error shape on every Messages route (count_tokens too).
  const auth = authMiddleware((err, c) => (isMessagesPath(c.req.path) ? anthropicErrorResponse(err, { "x-request-id": c.get("requestId") }) : errorResponse(err)));

  // Each route's own authentication and limits first, by the kind its row declares.
  for (const [method, path, kind, handler] of ROUTES) app.on(method, path, auth(kind), handler);

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
