import { describe, expect, it } from "vitest";
import { readBatchLines } from "../../../src/batch/batch-lines.ts";

const line = (o: object) => JSON.stringify(o);
const ok = (id: string, model = "m") => line({ custom_id: id, method: "POST", url: "/v1/chat/completions", body: { model, messages: [] } });
const anyModel = () => null;

describe("readBatchLines", () => {
  it("reads valid lines with their file line numbers; blank lines and CRLF are fine", () => {
    const text = [ok("a"), "", ok("b") + "\r", "   ", ok("c")].join("\n") + "\n";
    const r = readBatchLines(text, "/v1/chat/completions", anyModel, 10);
    expect(r.invalid).toEqual([]);
    expect(r.valid.map((v) => [v.customId, v.line, v.model])).toEqual([
      ["a", 1],
      ["b", 3],
      ["c", 5],
    ].map(([id, n]) => [id, n, "m"]));
  });

  it("puts each bad line aside with its line number, code and param, and goes on", () => {
    const text = [
      "{not json",
      "[1,2]",
      line({ method: "POST", url: "/v1/chat/completions", body: { model: "m" } }),
      ok("dup"),
      ok("dup"),
      line({ custom_id: "get", method: "GET", url: "/v1/chat/completions", body: { model: "m" } }),
      line({ custom_id: "url", method: "POST", url: "/v1/embeddings", body: { model: "m" } }),
      line({ custom_id: "body", method: "POST", url: "/v1/chat/completions", body: "hi" }),
      line({ custom_id: "nomodel", method: "POST", url: "/v1/chat/completions", body: {} }),
      ok("secret", "forbidden"),
      ok("fine"),
    ].join("\n");
    const r = readBatchLines(text, "/v1/chat/completions", (m) => (m === "forbidden" ? "not yours" : null), 100);
    expect(r.valid.map((v) => v.customId)).toEqual(["dup", "fine"]);
    expect(r.invalid.map((p) => [p.line, p.customId, p.code, p.param])).toEqual([
      [1, null, "invalid_json_line", null],
      [2, null, "invalid_json_line", null],
      [3, null, "missing_custom_id", "custom_id"],
      [5, "dup", "duplicate_custom_id", "custom_id"],
      [6, "get", "invalid_method", "method"],
      [7, "url", "mismatched_url", "url"],
      [8, "body", "invalid_body", "body"],
      [9, "nomodel", "missing_model", "body.model"],
      [10, "secret", "model_not_allowed", "body.model"],
    ]);
    expect(r.invalid.find((p) => p.code === "model_not_allowed")!.message).toContain("not yours");
  });

  it("refuses a file with more request lines than the limit", () => {
    const text = [ok("a"), ok("b"), ok("c")].join("\n");
    expect(readBatchLines(text, "/v1/chat/completions", anyModel, 2).tooMany).toBe(true);
    expect(readBatchLines(text, "/v1/chat/completions", anyModel, 3).tooMany).toBe(false);
  });

  it("takes time linear in the file: 50,000 lines at once", () => {
    const text = Array.from({ length: 50_000 }, (_, i) => ok(`r${i}`)).join("\n");
    const t0 = performance.now();
    const r = readBatchLines(text, "/v1/chat/completions", anyModel, 50_000);
    expect(r.valid.length).toBe(50_000);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
