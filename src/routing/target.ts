import type { BrowserTarget, LlamaTarget } from "../config/config-schema.ts";

/** A place a request can be served from, as the router sees it. */
export type Target =
  | (LlamaTarget & { name: string; kind: "llama" })
  | (BrowserTarget & {
      name: string;
      kind: "browser";
      /** Added by zero config rather than declared: its "no session" never hides an earlier failure. */
      implicit?: boolean;
    });

/** Client-facing name of a target: kind and host only (never a path or query that could hold secrets). */
export function targetName(t: LlamaTarget | BrowserTarget): string {
  if (t.kind === "browser") return `browser:${t.model}`;
  return `llama:${new URL(t.url).host}`;
}
