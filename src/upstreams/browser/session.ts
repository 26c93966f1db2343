// A browser session as the hub keeps it: the state in its socket's attachment (so it survives
// hibernation), and which relayed requests it can take. Pure.
import type { Endpoint, Hello } from "../../schemas/relay.ts";
import type { ServeGrant } from "./serve-grant.ts";

/** Random bytes in a session id (`s_` + 32 hex digits): it names a socket in stats and headers, so it must not be guessable. */
export const SESSION_ID_BYTES = 16;

/** One serving page's state, in its socket's attachment. */
export interface Session {
  sessionId: string;
  connectedAt: number;
  /** Set by `hello`: the models it serves. Until then the socket serves nothing. */
  models: string[];
  ready: boolean;
  /** A ping the hub answered itself (not the exact text the runtime answers and stamps). */
  pingedAt?: number;
  agent?: string;
  capabilities?: Hello["capabilities"];
  /** Who connected it and whose requests it takes (absent on sockets accepted before grants existed: everyone's). */
  grant?: ServeGrant;
}

/**
 * Whether a session serves `endpoint` with `model`: embedding models (announced in
 * `capabilities.embeddingModels`) serve only embeddings; the others serve chat, and completions when
 * the page announced `capabilities.completions`. Pages that announce nothing serve chat only.
 */
export function sessionServes(s: Pick<Session, "models" | "capabilities">, model: string, endpoint: Endpoint): boolean {
  if (!s.models.includes(model)) return false;
  const embedding = Array.isArray(s.capabilities?.embeddingModels) && s.capabilities.embeddingModels.includes(model);
  if (endpoint === "embeddings") return embedding;
  if (embedding) return false;
  return endpoint === "chat" || s.capabilities?.completions === true;
}

/** The most tokens one request for `model` can hold on the session (its hello's `contextWindows`), when it said. */
export function contextWindowOf(s: Pick<Session, "capabilities">, model: string): number | undefined {
  return s.capabilities?.contextWindows?.[model];
}
