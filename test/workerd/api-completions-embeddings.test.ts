import { describe, expect, it } from "vitest";
import { FIXTURE_URL, LLAMA_URL, call, configWith, grammar, readSse } from "./harness.ts";

const ask = (extra: Record<string, unknown>) => ({ model: "any-name", prompt: "Once upon a time", temperature: 0, max_tokens: 100, ...extra });

describe("POST /v1/completions against a real llama-server", () => {
  it("non-stream: a text_completion with the exact text, usage, the requested model", async () => {
    const { res } = await call("/v1/completions", { json: ask({ grammar: grammar(" there was a proxy.") }) });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toMatch(/^llama:/);
    expect(body).toMatchObject({ object: "text_completion", model: "any-name", choices: [{ text: " there was a proxy.", index: 0, finish_reason: "stop" }] });
    expect(body.id).toMatch(/^cmpl-/);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("stream: text chunks add up, finish chunk, usage chunk when asked, [DONE]", async () => {
    const want = " streamed ✓ text";
    const { res } = await call("/v1/completions", { json: ask({ stream: true, stream_options: { include_usage: true }, grammar: grammar(want) }) });
    const { frames, done } = await readSse(res);
    expect(done).toBe(true);
    expect(frames.map((f) => f.choices[0]?.text ?? "").join("")).toBe(want);
    expect(frames.every((f) => f.object === "text_completion" && f.model === "any-name")).toBe(true);
    expect(frames.at(-2)!.choices[0].finish_reason).toBe("stop");
    expect(frames.at(-1)!.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("fails over before the first byte, skips browser targets, and refuses n > 1", async () => {
    const vars = configWith({ m: { targets: [{ kind: "browser", model: "x" }, { kind: "llama", url: "http://127.0.0.1:9" }, { kind: "llama", url: LLAMA_URL }] } });
    const { res } = await call("/v1/completions", { json: ask({ model: "m", grammar: grammar("ok") }) }, vars);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-attempts")).toBe("3");
    expect(((await res.json()) as any).choices[0].text).toBe("ok");
    const n = await call("/v1/completions", { json: ask({ n: 2 }) });
    expect(n.res.status).toBe(400);
    expect(((await n.res.json()) as any).error).toMatchObject({ code: "unsupported_parameter", param: "n" });
  });

  it("logprobs: N gives each token's logprob, N alternatives and its offset, streamed and gathered", async () => {
    const want = " a proxy, twice";
    // Before: llama-server sent the entries and the text_completion always said logprobs: null.
    const { res } = await call("/v1/completions", { json: ask({ logprobs: 2, grammar: grammar(want) }) });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const lp = body.choices[0].logprobs;
    expect(lp.tokens.join("")).toBe(want);
    expect(lp.token_logprobs).toHaveLength(lp.tokens.length);
    expect(lp.token_logprobs.every((l: unknown) => typeof l === "number" && l <= 0)).toBe(true);
    expect(lp.top_logprobs.every((t: object) => Object.keys(t).length >= 1 && Object.keys(t).length <= 2)).toBe(true);
    let at = 0;
    expect(lp.text_offset).toEqual(lp.tokens.map((t: string) => ((at += [...t].length), at - [...t].length)));

    const streamed = await call("/v1/completions", { json: ask({ logprobs: 2, stream: true, grammar: grammar(want) }) });
    const { frames, done } = await readSse(streamed.res);
    expect(done).toBe(true);
    const withTokens = frames.filter((f) => f.choices?.[0]?.logprobs);
    expect(withTokens.map((f) => f.choices[0].logprobs.tokens.join("")).join("")).toBe(want);
    expect(withTokens.flatMap((f) => f.choices[0].logprobs.text_offset)).toEqual(lp.text_offset);
    expect(frames.filter((f) => f.choices?.[0]?.text).every((f) => f.choices[0].logprobs)).toBe(true);

    // 0: the tokens' own logprobs and no alternatives (llama-server reads 0 as none at all).
    const zero = (await (await call("/v1/completions", { json: ask({ logprobs: 0, grammar: grammar(want) }) })).res.json()) as any;
    expect(zero.choices[0].logprobs.tokens.join("")).toBe(want);
    expect(zero.choices[0].logprobs.top_logprobs.every((t: object) => Object.keys(t).length === 0)).toBe(true);
    // Not asked: null; more than OpenAI's 5: a 400 naming the field.
    const plain = (await (await call("/v1/completions", { json: ask({ grammar: grammar(want) }) })).res.json()) as any;
    expect(plain.choices[0].logprobs).toBeNull();
    const six = await call("/v1/completions", { json: ask({ logprobs: 6 }) });
    expect(six.res.status).toBe(400);
    expect(((await six.res.json()) as any).error.param).toBe("logprobs");
  });

  it("a mid-stream failure is an error frame, never a silent end", async () => {
    const vars = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/reset-mid` }] } });
    const { res } = await call("/v1/completions", { json: ask({ model: "m", stream: true }) }, vars);
    const { frames, done } = await readSse(res);
    expect(done).toBe(false);
    expect(frames.at(-1)!.error.code).toBe("upstream_error");
  });
});

describe("POST /v1/embeddings", () => {
  it("a llama-server without --embeddings: 400 embeddings_not_supported that says what to do", async () => {
    const { res } = await call("/v1/embeddings", { json: { model: "any", input: "hello" } });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ code: "embeddings_not_supported", param: "model" });
    expect(body.error.message).toContain("--embeddings");
  });

  it("validates the body and skips browser targets with no_capacity", async () => {
    const bad = await call("/v1/embeddings", { json: { model: "any" } });
    expect(bad.res.status).toBe(400);
    expect(((await bad.res.json()) as any).error).toMatchObject({ code: "missing_required_parameter", param: "input" });
    const browserOnly = await call("/v1/embeddings", { json: { model: "b", input: "x" } }, configWith({ b: { targets: [{ kind: "browser", model: "x" }] } }));
    expect(browserOnly.res.status).toBe(503);
    expect(((await browserOnly.res.json()) as any).error.code).toBe("no_capacity");
  });
});

describe("GET /v1/models/{id}", () => {
  it("declared: the entry, or 404 model_not_found; zero config: any id", async () => {
    const vars = configWith({ "org/tiny": { targets: [{ kind: "llama", url: LLAMA_URL }] } });
    const ok = await call("/v1/models/org/tiny", {}, vars);
    // OpenAI's four fields, plus the context window and capabilities clients size themselves by (docs/api.md#models).
    expect(await ok.res.json()).toMatchObject({ id: "org/tiny", object: "model", created: 0, owned_by: "switchyard" });
    const missing = await call("/v1/models/nope", {}, vars);
    expect(missing.res.status).toBe(404);
    expect(((await missing.res.json()) as any).error.code).toBe("model_not_found");
    const zero = await call("/v1/models/whatever");
    expect(await zero.res.json()).toMatchObject({ id: "whatever", object: "model" });
  });
});
