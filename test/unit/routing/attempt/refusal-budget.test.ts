// What a chat parser's refusal costs a request: the refused attempt charged the rest of its bound,
// and no more generations after refusals than were reserved.
import { describe, expect, it } from "vitest";
import { refusalBudget } from "../../../../src/routing/attempt/refusal-budget.ts";

const charges = () => {
  const got: number[] = [];
  return { got, charge: (t: number) => got.push(t) };
};

describe("RefusalBudget", () => {
  it("charges a refused attempt its own bound (a continuation's: the request's less what was written before it)", () => {
    const { got, charge } = charges();
    const b = refusalBudget(1, { max_tokens: 80 }, charge);
    b.refused({ max_tokens: 80 });
    b.refused({ max_tokens: 30, n_predict: 50 });
    expect(got).toEqual([80, 50]);
  });

  it("charges a refused answer the request's bound less the tokens its events count already", () => {
    const { got, charge } = charges();
    const b = refusalBudget(1, { max_completion_tokens: 80 }, charge);
    b.refusedAnswer(25);
    b.refusedAnswer(0);
    b.refusedAnswer(90);
    expect(got).toEqual([55, 80]);
  });

  it("charges nothing more without a bound (nothing more is known)", () => {
    const { got, charge } = charges();
    const b = refusalBudget(1, {}, charge);
    b.refused({});
    b.refusedAnswer(3);
    expect(got).toEqual([]);
  });

  it("lets as many generations follow refusals as were reserved", () => {
    const b = refusalBudget(1, { max_tokens: 8 }, () => {});
    expect(b.take()).toBe(true);
    expect(b.take()).toBe(false);
    expect(refusalBudget(0, {}, () => {}).take()).toBe(false);
  });
});
