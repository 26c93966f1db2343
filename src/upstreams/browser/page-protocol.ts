// The relay protocol as the hub speaks it (docs/relay-protocol.md): what a page's message means for
// its session, and the hub's own messages to the page. Pure: the hub does what it says.
import {
  CLOSE,
  MAX_MESSAGE_BYTES,
  PING_INTERVAL_MS,
  PONG_TEXT,
  RELAY_VERSION,
  parsePageMessage,
  type Endpoint,
  type PageMessage,
} from "../../schemas/relay.ts";
import type { Session } from "./session.ts";

/** A page's message about one relayed request: a chunk of its answer, its end, or its failure. */
export type AnswerMessage = Exclude<PageMessage, { type: "hello" | "ping" }>;

/**
 * What the hub does with a page's message:
 * - refuse: the page broke the protocol; its session ends with close `code`;
 * - reply: store `session` (the socket's new attachment) and send `reply` (ping, hello);
 * - answer: pass the message (`raw`, its text as sent) on to the request it names (chunk, done, error).
 */
export type PageAction = { kind: "refuse"; code: number; reason: string } | { kind: "reply"; session: Session; reply: string } | { kind: "answer"; message: AnswerMessage; raw: string };

export function readPageMessage(raw: string | ArrayBuffer, session: Session, now: number): PageAction {
  if (typeof raw !== "string") return refuse(CLOSE.malformed, "binary messages are not part of the protocol");
  const parsed = parsePageMessage(raw);
  if (!parsed.ok) return refuse(parsed.tooBig ? CLOSE.tooBig : CLOSE.malformed, parsed.problem);
  const msg = parsed.message;
  // A ping the runtime did not answer itself (not its exact text): answered here, its time the session's liveness.
  if (msg.type === "ping") return { kind: "reply", session: { ...session, pingedAt: now }, reply: PONG_TEXT };
  if (msg.type === "hello") {
    if (session.ready) return refuse(CLOSE.malformed, "hello was already sent on this socket");
    if (msg.version !== RELAY_VERSION) return refuse(CLOSE.unsupportedVersion, `unsupported version ${msg.version}; this hub speaks ${RELAY_VERSION}`);
    const next: Session = { ...session, ready: true, models: msg.models, ...(msg.agent ? { agent: msg.agent } : {}), ...(msg.capabilities ? { capabilities: msg.capabilities } : {}) };
    return { kind: "reply", session: next, reply: welcomeMessage(session.sessionId) };
  }
  if (!session.ready) return refuse(CLOSE.malformed, `${msg.type} before hello`);
  return { kind: "answer", message: msg, raw };
}

const refuse = (code: number, reason: string): PageAction => ({ kind: "refuse", code, reason });

export function welcomeMessage(sessionId: string): string {
  return JSON.stringify({ type: "welcome", version: RELAY_VERSION, sessionId, maxMessageBytes: MAX_MESSAGE_BYTES, pingIntervalMs: PING_INTERVAL_MS });
}

/** A request for the page. Chat requests keep the version-1 message exactly (no `endpoint`), for pages that predate it. */
export function requestMessage(id: string, endpoint: Endpoint, body: Record<string, unknown>): string {
  return JSON.stringify(endpoint === "chat" ? { type: "request", id, body } : { type: "request", id, endpoint, body });
}

export function cancelMessage(id: string): string {
  return JSON.stringify({ type: "cancel", id });
}

/** How many of the session's requests for `model` wait behind the running one. */
export function queueMessage(model: string, waiting: number): string {
  return JSON.stringify({ type: "queue", model, waiting });
}

export function noticeMessage(id: string, code: string, message: string): string {
  return JSON.stringify({ type: "notice", id, code, message });
}
