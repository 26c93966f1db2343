// A batch of spans held as its export body's bytes: the body is the OTLP/JSON envelope around every
// span added, in order, whatever their characters; a span past the bound is refused, not cut.
import { describe, expect, it } from "vitest";
import { SpanBatch } from "../../../src/observability/span-batch.ts";
import { exportEnvelope } from "../../../src/observability/otlp-spans.ts";

/** The body expected: the envelope around the spans, comma-separated. */
const exportBody = (spans: readonly string[]) => `${exportEnvelope().head}${spans.join(",")}${exportEnvelope().tail}`;
const decode = (b: Uint8Array) => new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(b);
const spanText = (i: number, name = `chat m${i}`) => JSON.stringify({ spanId: i.toString(16).padStart(16, "0"), name });

describe("SpanBatch", () => {
  it("an empty batch is a valid body with no spans", () => {
    const b = new SpanBatch(1 << 20);
    expect(decode(b.body())).toBe(exportBody([]));
    expect(b.count).toBe(0);
  });

  it("the body is exactly exportBody of the spans added, across growth and non-ASCII text", () => {
    const b = new SpanBatch(1 << 20);
    const texts: string[] = [];
    // ~700 spans of up to ~1 KB with 2-, 3- and 4-byte characters: the buffer doubles several times.
    for (let i = 0; i < 700; i++) {
      const t = spanText(i, `chat ${"é".repeat(i % 7)}${"中".repeat(i % 5)}${"😀".repeat(i % 3)}${"x".repeat(i % 300)}`);
      expect(b.add(t)).toBe(true);
      texts.push(t);
    }
    expect(b.count).toBe(700);
    const body = decode(b.body());
    expect(body).toBe(exportBody(texts));
    const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
    expect(parsed.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name)).toEqual(texts.map((t) => (JSON.parse(t) as { name: string }).name));
    // Reading the body twice gives the same bytes; adding after a read still makes a valid body.
    expect(decode(b.body())).toBe(body);
    expect(b.add(spanText(9999))).toBe(true);
    expect(decode(b.body())).toBe(exportBody([...texts, spanText(9999)]));
  });

  it("a span that would take the body past its bound is refused whole; the batch stays valid and keeps taking spans that fit", () => {
    const bound = 64 * 1024;
    const b = new SpanBatch(bound);
    const texts: string[] = [];
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const t = spanText(i, "y".repeat(900));
      if (b.add(t)) texts.push(t);
      else refused++;
    }
    expect(refused).toBeGreaterThan(0);
    expect(b.body().length).toBeLessThanOrEqual(bound);
    expect(decode(b.body())).toBe(exportBody(texts));
    // Near the bound with multi-byte text (its worst case does not fit, its exact size may): taken only when it all fits.
    const small = spanText(1, "中");
    const before = b.count;
    const ok = b.add(small);
    expect(decode(b.body())).toBe(exportBody(ok ? [...texts, small] : texts));
    expect(b.count).toBe(before + (ok ? 1 : 0));
    expect(new SpanBatch(1024).add("z".repeat(4096))).toBe(false);
  });

  it("a batch started at a size hint (the exporter's last batch) makes the same body, whatever the hint: smaller than the envelope, exact, or past the bound", () => {
    const texts = Array.from({ length: 300 }, (_, i) => spanText(i, `chat ${"ü".repeat(i % 4)}${"x".repeat(i % 500)}`));
    const bodyWith = (hint: number, bound = 1 << 20) => {
      const b = new SpanBatch(bound, hint);
      for (const t of texts) expect(b.add(t)).toBe(true);
      expect(b.nextBatchBytes()).toBeGreaterThanOrEqual(b.body().length);
      return decode(b.body());
    };
    const exact = new TextEncoder().encode(exportBody(texts)).length;
    for (const hint of [0, 10, 1024, exact - 1, exact, exact + 1, 4 << 20]) expect(bodyWith(hint)).toBe(exportBody(texts));
    // The bound still holds when the hint is past it.
    const b = new SpanBatch(4096, 1 << 20);
    let taken = 0;
    while (b.add(spanText(taken, "y".repeat(200)))) taken++;
    expect(b.body().length).toBeLessThanOrEqual(4096);
    expect(taken).toBeGreaterThan(0);
  });
});
