import type { KeyGate } from "./key-gate.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { EventPull } from "../stream/event-source.ts";
import type { UpstreamEvent } from "../stream/events.ts";
import type { StreamStart } from "../stream/sse-response.ts";
import type { KeyRecord, UsageReport } from "./key-record.ts";
import { chargedTokens, LEASE_RENEW_MS, type Observed } from "./limit-math.ts";

/**
 * One keyed request's accounting: its stream slot (renewed while it runs, freed when it ends) and
 * its usage, reported to the key's KeyGate with waitUntil once the last event has passed — or the
 * client left, or the upstream failed: those are charged what they used.
 */
export class Meter {
  private watched = false;
  private settled = false;
  /** Answers generated and not delivered (tool-call policy retries): charged on top. */
  private readonly discarded = { promptTokens: 0, completionTokens: 0 };
  private model = "";
  private backend = "";
  private readonly renewTimer?: ReturnType<typeof setInterval>;

  constructor(
    readonly key: KeyRecord,
    private readonly gate: DurableObjectStub<KeyGate>,
    private readonly leaseId: string | undefined,
    private readonly waitUntil: (p: Promise<unknown>) => void,
  ) {
    if (leaseId) this.renewTimer = setInterval(() => this.waitUntil(this.gate.renew(leaseId).catch(() => {})), LEASE_RENEW_MS);
  }

  /** 403 if the key's allow-list does not include the model. */
  checkModel(model: string): void {
    if (this.key.models && !this.key.models.includes(model)) {
      throw new ProxyError({
        status: 403,
        code: "model_not_allowed",
        param: "model",
        message: `The key "${this.key.name}" may not use the model "${model}". Ask your admin to add it to the key's models.`,
      });
    }
  }

  /** Follows a run's events to count what it used; the returned start replaces the original. */
  watch(start: Promise<StreamStart>, model: string, promptChars: number): Promise<StreamStart> {
    this.watched = true;
    this.model = model;
    const seen: Observed = { promptChars, completionChars: 0, completionDeltas: 0 };
    let failed = false;
    const observe = (e: UpstreamEvent) => {
      if (observeInto(seen, e)) failed = true;
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

  /** After the route: a request that never started a watched run is recorded here. */
  routeEnded(res: Response, extra: { model?: string; promptTokens?: number } = {}): void {
    if (this.watched) return;
    this.model = extra.model ?? this.model;
    this.backend = res.headers.get("x-switchyard-target") ?? "";
    this.settle({ promptTokens: extra.promptTokens ?? 0, completionTokens: 0, error: res.status >= 400 });
  }

  private settle(usage: { promptTokens: number; completionTokens: number; error: boolean }): void {
    if (this.settled) return;
    this.settled = true;
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    const total = {
      ...usage,
      promptTokens: usage.promptTokens + this.discarded.promptTokens,
      completionTokens: usage.completionTokens + this.discarded.completionTokens,
    };
    const report: UsageReport = { model: this.model, backend: this.backend, ...total, ...(this.leaseId ? { leaseId: this.leaseId } : {}) };
    this.waitUntil(this.gate.settle(report).catch(() => {}));
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
 * The pipeline's hook (startChat, with the request's `meter`): refuses a model outside the key's
 * allow-list before anything starts, and returns a start whose events are metered. A no-op without a
 * keyed caller.
 */
export function meterRun(meter: Meter | undefined, model: string, prompt: () => unknown, start: () => Promise<StreamStart>): Promise<StreamStart> {
  if (!meter) return start();
  meter.checkModel(model);
  return meter.watch(start(), model, JSON.stringify(prompt() ?? "").length);
}
