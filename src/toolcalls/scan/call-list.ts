// The calls one answer makes, in order: their indices (after any native calls), the caps on how
// many (parallel_tool_calls, MAX_CALLS_PER_ANSWER), the last closed block an echo is compared with,
// and the reports the encoder sends.

import type { FinishReason } from "../../events/events.ts";
import { sameJson } from "../json/same-json.ts";
import { problem, scoreOf } from "../scoring/problems.ts";
import type { ScoredToolCall, ToolCallReport } from "../scoring/types.ts";
import type { Output } from "./output.ts";

/**
 * The most tool calls one answer makes. Agents run a handful of calls per turn (OpenAI's parallel
 * calls rarely pass a dozen); a model looping on a call header writes thousands, and each kept call
 * would be scored, validated and answered at several times its size. Past the cap, call markup is
 * read and dropped unscored, and the first call carries `extra_calls_dropped` with the count.
 */
export const MAX_CALLS_PER_ANSWER = 128;

export class CallList {
  /** Index of the first call; raised when the upstream also sends native calls. */
  indexOffset = 0;
  readonly list: Array<{ index: number; call: ScoredToolCall }> = [];
  /** Calls dropped because parallel_tool_calls is false. */
  private dropped = 0;
  /** Calls past MAX_CALLS_PER_ANSWER, dropped unscored. */
  private overCap = 0;
  /** The calls of the last region, when it had a marker and its closing marker (an echo may follow). */
  lastBlock: ScoredToolCall[] | null = null;

  private readonly parallel: boolean;
  private readonly out: Output;

  constructor(parallel: boolean, out: Output) {
    this.parallel = parallel;
    this.out = out;
  }

  get count(): number {
    return this.list.length;
  }

  /** No further call will be kept: the next ones are counted and dropped. */
  get full(): boolean {
    return this.list.length + this.dropped >= MAX_CALLS_PER_ANSWER;
  }

  /** `n` calls past the cap, counted without being read. */
  dropOverCap(n: number): void {
    if (this.parallel) this.overCap += n;
    else this.dropped += n;
  }

  /** Emits a call (its announcement, then its whole arguments), or counts it when a cap applies. */
  emit(call: ScoredToolCall): void {
    if (!this.parallel && this.list.length > 0) {
      this.dropped++;
      return;
    }
    if (this.list.length >= MAX_CALLS_PER_ANSWER) {
      this.overCap++;
      return;
    }
    const index = this.indexOffset + this.list.length;
    this.list.push({ index, call });
    this.out.event({ type: "toolCall", index, id: call.id, name: call.function.name, argumentsDelta: "" });
    this.out.event({ type: "toolCall", index, argumentsDelta: call.function.arguments });
  }

  /** Whether `calls` are the calls of the block just closed, the same names and arguments in order. */
  repeatsLastBlock(calls: ScoredToolCall[]): boolean {
    const block = this.lastBlock;
    if (!block || calls.length !== block.length) return false;
    return calls.every((c, i) => c.function.name === block[i]!.function.name && sameJson(c.function.arguments, block[i]!.function.arguments));
  }

  /** The model wrote its last calls again right after them: the repetition is noted on the last call. */
  noteEcho(): void {
    const last = this.list[this.list.length - 1]!.call;
    last.problems.push(problem("echo_dropped", "the model wrote this call again right after it; the repetition was dropped"));
    last.score = scoreOf(last.problems);
  }

  /** The answer is complete: the first call says how many were dropped, and why. */
  finish(): void {
    if ((this.dropped > 0 || this.overCap > 0) && this.list.length > 0) {
      const first = this.list[0]!.call;
      if (this.dropped > 0) {
        first.problems.push(problem("extra_calls_dropped", `parallel_tool_calls is false: ${this.dropped} further call(s) were dropped`));
      }
      if (this.overCap > 0) {
        first.problems.push(
          problem("extra_calls_dropped", `the answer made more than ${MAX_CALLS_PER_ANSWER} calls: ${this.overCap} further call(s) were dropped`),
        );
      }
      first.score = scoreOf(first.problems);
    }
  }

  get toolCalls(): ScoredToolCall[] {
    return this.list.map((c) => c.call);
  }

  get reports(): ToolCallReport[] {
    return this.list.map(({ index, call }) => ({ index, id: call.id, score: call.score, problems: call.problems }));
  }

  /** The finish reason to report: `tool_calls` once a call was emitted and the model stopped. */
  finishReason(upstream: FinishReason): FinishReason {
    return upstream === "stop" && this.list.length > 0 ? "tool_calls" : upstream;
  }
}
