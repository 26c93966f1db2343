// Which scope each kind of API route needs, and what a route's kind means for its limits. Each route
// declares its kind in the app's route table (src/app.ts), next to its handler.

export const SCOPES = ["chat", "serve", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export type RouteKind =
  /**
   * Runs a model upstream (chat completions, responses, compact, messages, completions, embeddings):
   * holds one of the key's concurrency slots while it runs; the chat pipeline's hook also reserves
   * its tokens from the key's day. Uses the chat scope.
   */
  | "generate"
  /** Uses the chat scope and runs no model (model list, count_tokens, stored responses, tool-call rewrite). */
  | "chat"
  /** A browser session's own credential or ticket, checked by the route. */
  | "serve"
  /** The admin token or an admin key, checked by the route (requireAdmin). */
  | "admin"
  /** The caller's own usage: any valid key. */
  | "self"
  | "public";

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
