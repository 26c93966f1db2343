import { describe, expect, it } from "vitest";
import { NdjsonWriter } from "../../../../src/upstreams/browser/ndjson-writer.ts";

describe("NdjsonWriter", () => {
  it("one line per write; nothing after close", async () => {
    const w = new NdjsonWriter(() => {});
    w.write('{"a":1}');
    w.write('{"b":"é"}');
    w.close();
    w.write('{"c":3}');
    w.close();
    expect(await new Response(w.body).text()).toBe('{"a":1}\n{"b":"é"}\n');
  });

  it("the reader leaving is reported, and later writes are dropped", async () => {
    let cancelled = 0;
    const w = new NdjsonWriter(() => cancelled++);
    await w.body.cancel();
    expect(cancelled).toBe(1);
    w.write('{"a":1}');
    w.close();
  });
});
