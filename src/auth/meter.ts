// Charging a keyed request to its key: its concurrency slot and token reservation on the KeyGate,
// and the usage it reports when it ends, however it ends.
import type { KeyGate } from "./key-gate.ts";
import { checkModelName } from "../config/model-name.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { EventPull } from "../events/event-source.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { StreamStart } from "../responders/sse-response.ts";
import type { KeyRecord, UsageReport } from "./key-record.ts";
import { chargedTokens, embeddingInputTokens, isCount, LEASE_RENEW_MS, requestedMaxTokens, reservationOf, type Observed, type OutputBound } from "./limit-math.ts";

/**
 * One keyed request's accounting: its hold on the key's KeyGate (a concurrency slot and the tokens it
 * reserved from the day; renewed while it runs, released when it ends) and its usage, reported to the
 * KeyGate with waitUntil once the last event has passed — or the client left, or the upstream failed:
 * those are charged what they used. The charge replaces the reservation.
 */
export class Meter {
  private watched = false;
  private settled = false;
  /** Answers generated and not delivered (tool-call policy retries, chat parser refusals): charged on top. */
  private readonly discarded = { promptTokens: 0, completionTokens: 0 };
  private model = "";
  private backend = "";
  private renewTimer?: ReturnType<typeof setInterval>;
  private leaseId: string | undefined;
  /** An embeddings request's input, estimated in tokens (reserveInput): charged when the upstream counted none. */
  private inputEstimate: number | undefined;
  /** The run's output bound (reserve): what an answer its server's chat parser refused is charged at least. */
  private outputBound: number | undefined;
  /**
   * Tokens the hold reserved at admission (KeyGate.admit, a day far from its limit): a reservation up
   * to them is already counted on the KeyGate, so reserving it costs no call.
   */
  advance = 0;

  constructor(
    readonly key: KeyRecord,
    private readonly gate: DurableObjectStub<KeyGate>,
    leaseId: string | undefined,
    private readonly waitUntil: (p: Promise<unknown>) => void,
    /** The deployment's `limits.defaultMaxTokens`: a request's bound when it sets none and the key has no own default. */
    private readonly defaultMaxTokens: number,
    /** A batch line's (src/auth/batch-line.ts): its usage row's backend is `batch:<target>`, so a key's usage tells batch work apart. */
    private readonly batch = false,
  ) {
    this.holdOn(leaseId);
  }

  /** 400 for a model name over the bound, else 403 if the key's allow-list does not include the model. */
  checkModel(model: string): void {
    checkModelName(model);
    if (this.key.models && !this.key.models.includes(model)) {
      throw new ProxyError({
        status: 403,
        code: "model_not_allowed",
        param: "model",
        message: `The key "${this.key.name}" may not use the model "${model}". Ask your admin to add it to the key's models.`,
      });
    }
  }

  /**
   * The request as it will be sent: unchanged, unless the key has a day limit and the request sets no
   * max_tokens; then its max_tokens is the key's default (else the deployment's), so what is reserved
   * for it is also what it can generate. llama-server reads `n_predict` before `max_tokens`: one that
   * is not a count (-1: no limit) is replaced by the same bound.
   */
  bound<R extends OutputBound>(request: R): R {
    if (this.key.limits.tokensPerDay === undefined) return request;
    const asked = requestedMaxTokens(request);
    const unbounded = request.n_predict !== undefined && !isCount(request.n_predict);
    if (asked !== undefined && !unbounded) return request;
    const bound = asked ?? this.key.limits.defaultMaxTokens ?? this.defaultMaxTokens;
    return { ...request, max_tokens: bound, ...(request.n_predict !== undefined ? { n_predict: bound } : {}) };
  }

  /**
   * Before a run starts: reserves what it may use from the key's day (its prompt, estimated, and its
   * max_tokens, for each generation it may run) on its hold, or takes a hold (a concurrency slot)
   * when the route did not. Throws the 429 when it does not fit; the hold is then released and
   * nothing is charged.
   */
  async reserve(request: OutputBound, promptChars: number, generations: number): Promise<void> {
    const { tokensPerDay } = this.key.limits;
    this.outputBound = requestedMaxTokens(request);
    await this.reserveTokens(tokensPerDay === undefined ? 0 : reservationOf(promptChars, this.outputBound ?? 0, generations));
  }

  /**
   * Before an embeddings call: reserves its input's tokens (estimated: embeddingInputTokens), as
   * reserve() does for a generation, so a key's day holds while embeddings are in flight. What the
   * upstream counted replaces it when the route ends (routeEnded); without a count, the estimate.
   */
  async reserveInput(input: unknown): Promise<void> {
    this.inputEstimate = embeddingInputTokens(input);
    await this.reserveTokens(this.key.limits.tokensPerDay === undefined ? 0 : this.inputEstimate);
  }

  private async reserveTokens(tokens: number): Promise<void> {
    const { concurrency, tokensPerDay } = this.key.limits;
    if (tokensPerDay === undefined && (this.leaseId !== undefined || concurrency === undefined)) return;
    // The hold already reserves at least this much: the day's limit holds without another call, and
    // revocation was checked by this request's admission, as it is for every request.
    if (this.leaseId !== undefined && Math.max(1, Math.ceil(tokens)) <= this.advance) return;
    const reserved = await this.gate.reserve(this.leaseId, this.key.limits, tokens);
    if (!reserved.ok) {
      this.settled = true;
      this.holdOn(undefined);
      throw new ProxyError({ status: reserved.code === "invalid_api_key" ? 401 : 429, code: reserved.code, retryAfter: reserved.retryAfter, message: reserved.message });
    }
    this.holdOn(reserved.leaseId);
  }

  /** Follows a run's events to count what it used; the returned start replaces the original. */
  watch(start: Promise<StreamStart>, model: string, promptChars: number): Promise<StreamStart> {
    this.watched = true;
    this.model = model;
    const seen: Observed = { promptChars, completionChars: 0, completionDeltas: 0 };
    let failed = false;
    const observe = (e: UpstreamEvent) => {
      if (!observeInto(seen, e)) return;
      failed = true;
      if (e.type === "error" && e.error.unparsed && this.outputBound !== undefined) seen.refusedBound = this.outputBound;
    };
    const end = (error: boolean) => this.settle({ ...chargedTokens(seen), error: error || failed });
    return start.then(
      (s) => {
        this.backend = s.headers["x-switchyard-target"] ?? "";
        observe(s.first);
        const events: EventPull = {
          next: async () => {
            try {
              const e = await s.events.next();
              if (e) observe(e);
              else end(false);
              return e;
            } catch (err) {
              end(true);
              throw err;
            }
          },
          cancel: () => {
            s.events.cancel();
            end(false);
          },
        };
        return { ...s, events };
      },
      (err: unknown) => {
        end(true);
        throw err;
      },
    );
  }

  /** An answer the policy generated and then dropped (a retry replaced it): it still counts. */
  chargeDiscarded(events: UpstreamEvent[], promptChars: number): void {
    const seen: Observed = { promptChars, completionChars: 0, completionDeltas: 0 };
    for (const e of events) observeInto(seen, e);
    const used = chargedTokens(seen);
    this.discarded.promptTokens += used.promptTokens;
    this.discarded.completionTokens += used.completionTokens;
  }

  /**
   * Tokens an attempt generated beyond what the answer's events count: one whose answer its server's
   * chat parser refused before another generation took over (routing/attempt/refusal-budget.ts).
   */
  chargeGenerated(tokens: number): void {
    this.discarded.completionTokens += tokens;
  }

  /** After the route: a request that never started a watched run is recorded here. */
  routeEnded(res: Response, extra: { model?: string; promptTokens?: number } = {}): void {
    if (this.watched) return;
    this.model = extra.model ?? this.model;
    this.backend = res.headers.get("x-switchyard-target") ?? "";
    const promptTokens = isCount(extra.promptTokens) ? extra.promptTokens : res.ok ? (this.inputEstimate ?? 0) : 0;
    this.settle({ promptTokens, completionTokens: 0, error: res.status >= 400 });
  }

  private settle(usage: { promptTokens: number; completionTokens: number; error: boolean }): void {
    if (this.settled) return;
    this.settled = true;
    const leaseId = this.leaseId;
    this.holdOn(undefined);
    const total = {
      ...usage,
      promptTokens: usage.promptTokens + this.discarded.promptTokens,
      completionTokens: usage.completionTokens + this.discarded.completionTokens,
    };
    const report: UsageReport = { model: this.model, backend: this.batch ? `batch:${this.backend}` : this.backend, ...total, ...(leaseId ? { leaseId } : {}) };
    // A charge that does not land is said in the log (the key's id, never its secret): the request
    // would otherwise go unpaid, and its hold would stand until it expires.
    this.waitUntil(
      this.gate.settle(report).catch((e: unknown) => {
        console.error(`[usage] key ${this.key.id}: a request's usage (${total.promptTokens} + ${total.completionTokens} tokens) was not recorded: ${String(e instanceof Error ? e.message : e).slice(0, 200)}`);
      }),
    );
  }

  /** Renews the hold `leaseId` while the request runs (none: stops renewing). */
  private holdOn(leaseId: string | undefined): void {
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    this.leaseId = leaseId;
    if (leaseId) this.renewTimer = setInterval(() => this.waitUntil(this.gate.renew(leaseId).catch(() => {})), LEASE_RENEW_MS);
  }
}

/** Counts one event into what a run used; true when it is an error. */
function observeInto(seen: Observed, e: UpstreamEvent): boolean {
  if (e.type === "text" || e.type === "reasoning") {
    seen.completionChars += e.delta.length;
    seen.completionDeltas++;
  } else if (e.type === "toolCall") {
    seen.completionChars += e.argumentsDelta.length + (e.name?.length ?? 0);
    seen.completionDeltas++;
  } else if (e.type === "usage") seen.reported = { promptTokens: e.usage.promptTokens, completionTokens: e.usage.completionTokens };
  else if (e.type === "error") return true;
  return false;
}

/**
 * The pipeline's meter stage (runChat in routing/pipeline.ts, with the request's `meter` and the request as `bound` made it):
 * refuses a model outside the key's allow-list before anything starts, reserves what the run may use
 * (and a slot, if the route took none), and returns a start whose events are metered and the
 * reservation itself (`reserved`: a refusal of the key's limits must keep its 429, so the responders
 * start the commit grace only once it is settled). A caller without a key has no meter, and the
 * pipeline does not come here. `generations`: how many answers the run may generate (a tool-call policy
 * retry is a second; a continuation or raw replay after a chat parser's refusal one more).
 */
export function meterRun(
  meter: Meter,
  request: OutputBound & Pick<ChatRequest, "model" | "tools">,
  prompt: () => unknown,
  start: () => Promise<StreamStart>,
  generations = 1,
): { start: Promise<StreamStart>; reserved: Promise<void> } {
  meter.checkModel(request.model);
  const promptChars = JSON.stringify(prompt() ?? "").length;
  const toolChars = request.tools ? JSON.stringify(request.tools).length : 0;
  const reserved = meter.reserve(request, promptChars + toolChars, generations);
  return { start: meter.watch(reserved.then(start), request.model, promptChars), reserved };
}
