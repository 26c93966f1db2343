// What a server's chat parser refusing an answer costs the request: the refused attempt generated up
// to its bound, and Switchyard cannot see how much (llama-server sends no chunk while its parser holds
// text back, and no usage with the refusal), so that attempt is charged its bound; and how many more
// generations (a continuation, a raw replay) may follow such a refusal within what was reserved.
import { requestedMaxTokens, type OutputBound } from "../../auth/limit-math.ts";

/** One request's generations after a refusal: how many may still run, and the charge of each refused attempt. */
export class RefusalBudget {
  constructor(
    /** Generations reserved for after a refusal (the meter reserved one more generation for each). */
    private left: number,
    /** The request's output bound as sent (the meter bound it), or undefined when it sets none. */
    private readonly bound: number | undefined,
    /** Charges tokens on top of what the answer's own events count (the key's meter). */
    private readonly charge: (tokens: number) => void,
  ) {}

  /**
   * An attempt sent `request` and its answer was refused after `counted` of its tokens were counted
   * by the answer's events: the rest of its bound is charged. Without a bound, nothing more is known.
   */
  refused(request: OutputBound, counted = 0): void {
    const bound = requestedMaxTokens(request);
    if (bound !== undefined && bound > counted) this.charge(bound - counted);
  }

  /**
   * The request's answer was refused after `counted` of its tokens were counted (the text written
   * before, which a continuation's usage counts again): the rest of the request's bound is charged.
   * Each continuation's bound is the request's less what was written before it, so this covers the
   * attempt that refused, first or a continuation.
   */
  refusedAnswer(counted: number): void {
    if (this.bound !== undefined && this.bound > counted) this.charge(this.bound - counted);
  }

  /** Takes one generation after a refusal; false when none was reserved (the refusal stands). */
  take(): boolean {
    if (this.left <= 0) return false;
    this.left--;
    return true;
  }
}

/** A budget with `left` generations after a refusal for `request`, charging `charge`. */
export function refusalBudget(left: number, request: OutputBound, charge: (tokens: number) => void): RefusalBudget {
  return new RefusalBudget(left, requestedMaxTokens(request), charge);
}
