// What the request log and the traces learn of one request from the pipeline itself, as its events
// pass on their way to the encoder: model, usage, finish, the error code, the first token and the
// end, Switchyard's extension, and (capture on) the answer assembled — no second reading of the
// bytes the client got.
import type { EventPull } from "../events/event-source.ts";
import type { AnswerEnd, AnswerObserver } from "../responders/answer-observer.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { SwitchyardExtension } from "../events/switchyard-extension.ts";
import type { AnswerFacts } from "./answer-facts.ts";

/** A run's answer as capture keeps it: what the client was sent, and the model's own text before the rewriter. */
export interface AssembledAnswer {
  text: string;
  reasoning: string;
  tool_calls: Array<{ name: string; arguments: string }>;
  /** The model's text as it wrote it, when the rewriter turned some of it into tool calls. */
  raw_text?: string;
}

/** What a run hands over: its events (wrapped here) and the moment the first one came. */
interface RunStart {
  first: UpstreamEvent;
  events: EventPull;
}

/**
 * One request's facts, filled by the pipeline (runChat: `asked`, `follow`; the responder delivering
 * the answer calls `event` and `end`) or the embeddings route (`answered`), and read by the request
 * log once the answer ended (`whenEnded`). Capture also assembles the answer and the model's raw text, each up to
 * `captureBytes` characters: on from the start (`observability.capture`), or turned on by
 * `captureKeyed` once the caller's key is known (a key with `capture`, up to `keyCaptureBytes`).
 */
export class RunFacts implements AnswerObserver {
  model?: string;
  stream?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  finishReasons: string[] = [];
  /** The error code the client got: a refused run's, or the stream's error event's. */
  error?: string;
  firstTokenAt?: number;
  endedAt?: number;
  cancelled = false;
  extension?: SwitchyardExtension;
  /** A run started (the log then waits for its end: `whenEnded`); false: the route answered without one. */
  ran = false;
  /** Who is told when the answer ends (the request log's middleware). */
  private ended?: () => void;
  private answer?: AssembledAnswer;
  private extensionOf?: () => SwitchyardExtension;
  /** Some part of the assembled answer or raw text reached the capture bound. */
  cut = false;
  private raw?: { text: string };
  private calls?: Map<number, { name: string; arguments: string }>;
  /** The request body as the route read it (its JSON, or its text when it was not JSON), when capture was turned on by `captureKeyed`. */
  keyedRequest?: string;

  /**
   * @param captureBytes capture on from the start, each part up to this many characters (0: off)
   * @param keyCaptureBytes the bound a key's capture takes when `captureKeyed` turns it on (0: a key
   *   cannot turn it on, the request log being off)
   */
  constructor(
    private captureBytes = 0,
    private readonly keyCaptureBytes = 0,
  ) {
    if (captureBytes > 0) this.startCapture();
  }

  /** The answer is being captured (from the start, or since `captureKeyed`). */
  get capturing(): boolean {
    return this.answer !== undefined;
  }

  /** A key could still turn capture on: the log is on and capture is not on already (one boolean for the route to check before it looks at the key). */
  get keyCapturable(): boolean {
    return this.keyCaptureBytes > 0 && this.answer === undefined;
  }

  /**
   * Capture turned on for a key that asks for it, known only once it was authenticated: `requestText`
   * is the body as its route read it, its JSON or the text that was not JSON (the raw body was not
   * copied: the middleware did not know the key), absent for a request refused before its route read
   * it (the middleware reads it then).
   * Called before the run starts, so every answer event is assembled.
   */
  captureKeyed(requestText?: string): void {
    if (!this.keyCapturable) return;
    this.captureBytes = this.keyCaptureBytes;
    this.startCapture();
    if (requestText !== undefined) this.keyedRequest = requestText;
  }

  private startCapture(): void {
    this.answer = { text: "", reasoning: "", tool_calls: [] };
    this.calls = new Map();
  }

  /**
   * The body as the client sent it, before validation: its model (up to 256 characters) and stream
   * flag. A body that sets no `stream` (or `null`) asked for none, as OpenAI reads it; so did one that
   * is not a JSON object (`undefined`: not JSON). A `stream` of another type asked nothing the log can say.
   */
  sent(body: unknown): void {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      this.stream ??= false;
      return;
    }
    const { model, stream } = body as { model?: unknown; stream?: unknown };
    if (typeof model === "string" && model !== "") this.model ??= model.slice(0, 256);
    if (typeof stream === "boolean") this.stream ??= stream;
    else if (stream === undefined || stream === null) this.stream ??= false;
  }

  /** The request as routing sees it (the model asked for; streamed or not). */
  asked(model: string, stream: boolean): void {
    this.model = model;
    this.stream = stream;
  }

  /**
   * A run starts: from now on the log waits for its end (`end`, from the responder that delivers it).
   * `extension` is read then (the tool-call scores are complete once the events are).
   */
  follow(extension: () => SwitchyardExtension): void {
    this.ran = true;
    this.extensionOf = extension;
  }

  /** An event on its way to the client's encoder (AnswerObserver). */
  event(e: UpstreamEvent): void {
    this.see(e);
  }

  /** The delivery ended (AnswerObserver): all sent, the client gone, or failed before its first event. */
  end(how: AnswerEnd): void {
    if (this.endedAt !== undefined) return;
    if (how === "client_gone") this.cancelled = true;
    else if (how !== "done") {
      const code = (how.error as { code?: unknown } | null)?.code;
      this.error ??= typeof code === "string" && code !== "" ? code : "upstream_error";
    }
    this.endedAt = Date.now();
    // A delivered answer's extension; one that failed before its first event has none (the
    // response's headers tell its attempts and outcomes).
    if (how === "done" || how === "client_gone") {
      try {
        this.extension = this.extensionOf?.();
      } catch {}
    }
    this.extensionOf = undefined;
    this.tell();
  }

  /** Calls `f` once the answer has ended, at once if it has (one follower; `f` must not throw). */
  whenEnded(f: () => void): void {
    if (this.endedAt !== undefined) f();
    else this.ended = f;
  }

  private tell(): void {
    const f = this.ended;
    this.ended = undefined;
    f?.();
  }

  /** An answer read whole by its route (embeddings): its usage, and the end. */
  answered(usage: { promptTokens?: number; completionTokens?: number }, extension: SwitchyardExtension): void {
    this.ran = true;
    if (usage.promptTokens !== undefined) this.promptTokens = usage.promptTokens;
    if (usage.completionTokens !== undefined) this.completionTokens = usage.completionTokens;
    this.extension = extension;
    this.firstTokenAt ??= Date.now();
    this.endedAt ??= Date.now();
    this.tell();
  }

  /**
   * An answer as the model wrote it, before the rewriter: with capture on, its text is kept (up to
   * the bound) beside the answer, and shown when the rewriter turned some of it into tool calls.
   * Without capture, the answer as it is. Each answer replaces the last (a policy retry's, say).
   */
  rawOf<A extends RunStart>(answer: A): A {
    if (!this.answer) return answer;
    const raw = (this.raw = { text: "" });
    const keep = <E extends UpstreamEvent | null | undefined>(e: E): E => {
      if (e?.type === "text") raw.text = this.append(raw.text, e.delta);
      return e;
    };
    keep(answer.first);
    const inner = answer.events;
    const events: EventPull = { next: () => inner.next().then(keep), cancel: () => inner.cancel() };
    if (inner.nextNow) {
      const now = inner.nextNow.bind(inner);
      events.nextNow = () => keep(now());
    }
    return { ...answer, events };
  }

  /** The answer assembled (capture on; undefined otherwise). */
  assembled(): AssembledAnswer | undefined {
    if (!this.answer) return undefined;
    const tool_calls = [...this.calls!.values()];
    const rewritten = tool_calls.length > 0 && this.raw !== undefined && this.raw.text !== this.answer.text;
    return { ...this.answer, tool_calls, ...(rewritten ? { raw_text: this.raw!.text } : {}) };
  }

  /** What the log's record reads (answer-facts' shape). */
  facts(): AnswerFacts {
    return {
      ...(this.model !== undefined ? { model: this.model } : {}),
      ...(this.promptTokens !== undefined ? { promptTokens: this.promptTokens } : {}),
      ...(this.completionTokens !== undefined ? { completionTokens: this.completionTokens } : {}),
      finishReasons: this.finishReasons,
      ...(this.error !== undefined ? { error: this.error } : {}),
      ...(this.extension ? { extension: this.extension } : {}),
    };
  }

  private see(e: UpstreamEvent): void {
    switch (e.type) {
      case "text":
      case "reasoning":
      case "toolCall":
        this.firstTokenAt ??= Date.now();
        if (this.answer) this.assemble(e);
        return;
      case "usage":
        this.promptTokens = e.usage.promptTokens;
        this.completionTokens = e.usage.completionTokens;
        return;
      case "finish":
        this.finishReasons = [e.reason];
        return;
      case "error":
        this.error = e.error.code ?? "upstream_error";
        return;
    }
  }

  private assemble(e: UpstreamEvent): void {
    const a = this.answer!;
    if (e.type === "text") a.text = this.append(a.text, e.delta);
    else if (e.type === "reasoning") a.reasoning = this.append(a.reasoning, e.delta);
    else if (e.type === "toolCall") {
      let call = this.calls!.get(e.index);
      if (!call) {
        if (this.calls!.size >= 128) return void (this.cut = true);
        this.calls!.set(e.index, (call = { name: "", arguments: "" }));
      }
      if (e.name !== undefined) call.name = e.name.slice(0, 256);
      call.arguments = this.append(call.arguments, e.argumentsDelta);
    }
  }

  /** `to` + `more`, up to the capture bound (then `cut`). */
  private append(to: string, more: string): string {
    const room = this.captureBytes - to.length;
    if (more.length <= room) return to + more;
    this.cut = true;
    return room > 0 ? to + more.slice(0, room) : to;
  }
}
