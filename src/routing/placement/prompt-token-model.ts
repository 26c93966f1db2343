// One server's model of how many prompt tokens a request's JSON makes: a fixed overhead (the chat
// template's role markers, the generation prompt, a BOS) plus a per-character rate, fitted on what
// the server itself reported (answers' `usage.prompt_tokens`, its own `/tokenize` counts). A single
// tokens-per-character ratio learned from tiny prompts, where the template's fixed tokens dominate,
// overestimates a long prompt threefold; the two terms apart do not.

/** One measure: a prompt of `chars` characters of JSON was `tokens` tokens on the server. */
export interface TokenSample {
  chars: number;
  tokens: number;
}

/**
 * Before a server reported any count: chat JSON runs 3 to 5 characters a token (0.25 is the middle)
 * and a template adds a few tokens. Also the rate assumed when the samples are too alike in size to
 * tell the rate from the overhead (a burst of tiny prompts): then only the overhead is fitted.
 */
export const PRIOR_RATE = 0.25;
/** Samples kept per server (the most recent). */
export const SAMPLES_KEPT = 32;
/** The rate is fitted only over samples whose largest is at least this many times the smallest. */
const SPREAD = 2;
/** A fitted rate outside these bounds is a bad fit (mixed tokenizers, odd samples): the prior stands. */
const RATE_MIN = 0.02;
const RATE_MAX = 2;

/** A linear model of a prompt's tokens from its characters: `overhead + rate × chars`. */
export interface TokenLine {
  overhead: number;
  rate: number;
}

/** The line through `samples` (least squares), or with the rate fixed at the prior when they are too alike in size. */
export function fitTokenLine(samples: readonly TokenSample[]): TokenLine {
  if (!samples.length) return { overhead: 0, rate: PRIOR_RATE };
  let minC = Infinity;
  let maxC = 0;
  let sumC = 0;
  let sumT = 0;
  for (const s of samples) {
    minC = Math.min(minC, s.chars);
    maxC = Math.max(maxC, s.chars);
    sumC += s.chars;
    sumT += s.tokens;
  }
  const n = samples.length;
  const meanC = sumC / n;
  const meanT = sumT / n;
  if (n >= 2 && maxC >= SPREAD * Math.max(1, minC)) {
    let cov = 0;
    let varC = 0;
    for (const s of samples) {
      cov += (s.chars - meanC) * (s.tokens - meanT);
      varC += (s.chars - meanC) ** 2;
    }
    const rate = cov / varC;
    if (rate >= RATE_MIN && rate <= RATE_MAX) return { overhead: Math.max(0, meanT - rate * meanC), rate };
  }
  // Alike in size: the overhead is what the prior rate leaves of their mean; a rate above the
  // samples' own ratio (long prompts of a dense tokenizer) is not assumed.
  const rate = Math.min(PRIOR_RATE, meanT / Math.max(1, meanC));
  return { overhead: Math.max(0, meanT - rate * meanC), rate };
}

/** The recent samples of one server and the line fitted on them (refitted lazily after a change). */
export class PromptTokenModel {
  private readonly samples: TokenSample[] = [];
  private line: TokenLine | undefined;

  /** Whether any count of this server's is known (else the estimate is the prior alone). */
  get learned(): boolean {
    return this.samples.length > 0;
  }

  add(sample: TokenSample): void {
    if (!(sample.chars > 0) || !(sample.tokens > 0)) return;
    this.samples.push(sample);
    if (this.samples.length > SAMPLES_KEPT) this.samples.shift();
    this.line = undefined;
  }

  fitted(): TokenLine {
    return (this.line ??= fitTokenLine(this.samples));
  }

  /** The estimated tokens of a prompt of `chars` characters. */
  estimate(chars: number): number {
    const { overhead, rate } = this.fitted();
    return Math.round(overhead + rate * chars);
  }
}
