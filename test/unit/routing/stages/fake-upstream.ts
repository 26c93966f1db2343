// An Upstream whose answers are scripted event lists (or failures), for the pipeline stages' unit tests.
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import type { EventStreamReader } from "../../../../src/events/event-source.ts";
import type { AttemptContext, RawTextUpstream, Upstream } from "../../../../src/upstreams/upstream.ts";

export type Script = UpstreamEvent[] | ProxyError;

/** A reader over `events`, then done. */
export function readerOf(events: UpstreamEvent[]): EventStreamReader {
  let i = 0;
  return {
    read: async () => (i < events.length ? { done: false, value: events[i++]! } : { done: true, value: undefined }),
    cancel: async () => {
      i = events.length;
    },
  };
}

/** Answers each open() with the next script; `raw`, when given, is its raw-text form (a refused parse). */
export class FakeUpstream implements Upstream {
  opened: AttemptContext[] = [];
  constructor(
    readonly name: string,
    private readonly scripts: Script[],
    private readonly raw?: { generationPrompt: string; events: UpstreamEvent[] },
  ) {}

  async open(_request: unknown, ctx: AttemptContext): Promise<EventStreamReader> {
    this.opened.push(ctx);
    const next = this.scripts.shift() ?? new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${this.name}: no more scripts` });
    if (next instanceof ProxyError) throw next;
    return readerOf(next);
  }

  withoutChatParser(): RawTextUpstream | undefined {
    const raw = this.raw;
    if (!raw) return undefined;
    return { name: `${this.name}:raw`, generationPrompt: raw.generationPrompt, open: async () => readerOf(raw.events) };
  }
}

export const text = (delta: string): UpstreamEvent => ({ type: "text", delta });
export const finish = (reason: "stop" | "length" = "stop"): UpstreamEvent => ({ type: "finish", reason });
