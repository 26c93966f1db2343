// The browser-session kind (`"kind": "browser"`): a model served from teammates' pages through the
// SessionHub, which places each request among its sessions itself.
import type { BrowserTarget } from "../../config/config-schema.ts";
import type { TargetAdapter } from "../adapter.ts";
import { BrowserCompletionsUpstream } from "./browser-completions-upstream.ts";
import { fetchBrowserEmbeddings } from "./browser-embeddings.ts";
import { BrowserUnableError, BrowserUpstream } from "./browser-upstream.ts";

export const browserAdapter: TargetAdapter<BrowserTarget> = {
  name: (t) => `browser:${t.model}`,
  capabilities: (t) => ({
    // The hub tracks its sessions itself: no server for Switchyard's health, queue or ledger.
    server: null,
    identity: t.model,
    // web-llm refuses a trailing assistant message: its answers cannot be continued in a page. A GGUF
    // tab runs llama.cpp's own chat code, which continues one (and echoes it first, as llama-server does).
    continues: t.gguf ? { withPromptTools: false } : null,
    retriesSameTarget: false,
    placesByPrompt: true,
    teammateDevice: true,
  }),
  chat: (t) => new BrowserUpstream(t.name, t),
  completions: (t, body) => new BrowserCompletionsUpstream(t.name, t, body),
  async embeddings(t, body, ctx, totalMs) {
    try {
      return await fetchBrowserEmbeddings(t, t.name, body, ctx, totalMs);
    } catch (e) {
      if (!(e instanceof BrowserUnableError)) throw e;
      throw new BrowserUnableError({
        status: 503,
        code: "no_capacity",
        retryAfter: 5,
        retryable: true,
        message: `${t.name} cannot serve embeddings (no browser session serves ${t.model} as an embedding model), and no other target for this model could.`,
      });
    }
  },
};
