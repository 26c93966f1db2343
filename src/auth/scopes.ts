// Which scope each API route needs. `null`: public (health) or checked elsewhere (a session ticket).

export const SCOPES = ["chat", "serve", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export type RouteKind =
  /** Generates with a model: leased as a stream, counted in tokens. */
  | "generate"
  /** Uses the chat scope but starts no generation (models, embeddings, tool-call rewrite). */
  | "chat"
  | "serve"
  | "admin"
  /** The caller's own usage: any valid key. */
  | "self"
  | "public";

const GENERATE = new Set(["/v1/chat/completions", "/chat/completions", "/v1/responses", "/v1/messages", "/v1/completions"]);

export function routeKind(method: string, path: string): RouteKind {
  if (path === "/health" || !path.startsWith("/v1/") && path !== "/chat/completions") return "public";
  if (path.startsWith("/v1/admin/") || path === "/v1/admin") return "admin";
  if (path === "/v1/sessions" || path === "/v1/sessions/ticket") return "serve";
  if (path === "/v1/usage") return "self";
  if (method === "POST" && GENERATE.has(path)) return "generate";
  return "chat";
}

export function scopeFor(kind: RouteKind): Scope | null {
  if (kind === "generate" || kind === "chat") return "chat";
  if (kind === "serve") return "serve";
  if (kind === "admin") return "admin";
  return null;
}

/** Parses `chat,serve` into scopes; unknown names are returned in `unknown`. */
export function parseScopes(input: readonly string[]): { scopes: Scope[]; unknown: string[] } {
  const scopes: Scope[] = [];
  const unknown: string[] = [];
  for (const raw of input) {
    const s = raw.trim();
    if (!s) continue;
    if ((SCOPES as readonly string[]).includes(s)) {
      if (!scopes.includes(s as Scope)) scopes.push(s as Scope);
    } else unknown.push(s);
  }
  return { scopes, unknown };
}
