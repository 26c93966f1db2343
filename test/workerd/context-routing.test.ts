import { describe, expect, it } from "vitest";
import { resetHealthCache } from "../../src/health/health-client.ts";
import { FIXTURE_URL, LLAMA_URL, call, configWith, grammar, readSse, received, text } from "./harness.ts";

// Context-aware routing inside workerd: the health hub learns each llama-server's per-slot window
// from /slots (the real llama-server here has 512 tokens per slot; fixture upstreams report theirs
// with an n_ctx-<n> path segment), and a prompt goes only where it fits.
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const big = (name: string) => `${FIXTURE_URL}/u-cb${tag}${name}/n_ctx-100000/behave/say/${name}`;
const small = (name: string, n: number) => `${FIXTURE_URL}/u-cs${tag}${name}/n_ctx-${n}/behave/say/${name}`;
// The hub samples every 200 ms; every request refreshes the isolate's snapshot in the background.
const vars = (targets: string[]) => configWith({ m: { targets: targets.map((url) => ({ kind: "llama", url })) } }, { health: { sampleMs: 200, snapshotTtlMs: 0 } });
const long = "lorem ipsum dolor sit amet ".repeat(200); // about 2,200 tokens for the test model
// By the real server's /apply-template and /tokenize: 35 repeats are 425 tokens in 973 characters of
// JSON (fit its 512-token slots), 60 are 700 (do not); "hi" is 42 tokens in 30 characters (the
// template's fixed tokens).
const FITS_REPEATS = 35;
const OVER_REPEATS = 60;
const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content }], stream: true, max_tokens: 8, ...extra });

async function send(v: Record<string, unknown>, body: Record<string, unknown>) {
  const { res, done } = await call("/v1/chat/completions", { json: body }, v);
  const out = { status: res.status, target: "", attempts: 0, text: "", error: null as null | { code: string; message: string } };
  if (res.status === 200) {
    const { frames } = await readSse(res);
    out.text = text(frames);
    const ext = frames.find((f) => f.x_switchyard)?.x_switchyard;
    out.target = ext?.target ?? "";
    out.attempts = ext?.attempts ?? 0;
  } else out.error = (await res.json<any>()).error;
  await done();
  return out;
}

/** Short requests until the hub has sampled every target and this isolate holds that snapshot. */
async function warmUp(v: Record<string, unknown>, body: Record<string, unknown>) {
  resetHealthCache();
  for (let i = 0; i < 4; i++) {
    expect((await send(v, body)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("context-aware routing", () => {
  it("a prompt the real llama-server's 512-token slots cannot hold goes to the target that can; a short one stays", async () => {
    const v = vars([LLAMA_URL, big("roomy")]);
    await warmUp(v, ask("hi", { grammar: grammar("ok") }));
    const short = await send(v, ask("hi", { grammar: grammar("ok") }));
    expect(short.target).toMatch(/^llama:127\.0\.0\.1/);
    const sentBefore = (await received()).length;
    const answer = await send(v, ask(long, { grammar: grammar("ok") }));
    // One attempt: llama-server was never asked (it would have answered 400 and the request moved on).
    expect(answer).toMatchObject({ status: 200, text: "roomy", attempts: 1 });
    expect((await received()).slice(sentBefore).filter((r) => r.body.includes("lorem")).length).toBe(1);
  });

  it("issue 41: after a burst of tiny prompts, a long prompt that fits the real llama-server's 512-token slots is served there, not refused", async () => {
    // The real server first, then one whose 64 tokens hold nothing long: today's ratio, learned from
    // the tiny prompts (the template's fixed tokens over a few characters), refused the long prompt
    // on both with a made-up count; the server's own count says it fits.
    const v = vars([LLAMA_URL, small("s64b", 64)]);
    await warmUp(v, ask("hi", { grammar: grammar("ok") }));
    await Promise.all(Array.from({ length: 6 }, () => send(v, ask("[[tag]] write the text", { grammar: grammar("ok") }))));
    const fits = "lorem ipsum dolor sit amet ".repeat(FITS_REPEATS);
    const answer = await send(v, ask(fits, { grammar: grammar("ok") }));
    expect(answer).toMatchObject({ status: 200, text: "ok", attempts: 1 });
    expect(answer.target).toMatch(/^llama:127\.0\.0\.1/);
    // One that does not fit (by the server's count) goes where it does, without asking the server.
    const v2 = vars([LLAMA_URL, big("roomy3")]);
    await warmUp(v2, ask("hi", { grammar: grammar("ok") }));
    const over = await send(v2, ask("lorem ipsum dolor sit amet ".repeat(OVER_REPEATS), { grammar: grammar("ok") }));
    expect(over).toMatchObject({ status: 200, text: "roomy3", attempts: 1 });
  });

  it("targets that hold the prompt but not max_tokens come after those that hold both", async () => {
    const v = vars([small("tight", 20_000), big("roomy2")]);
    await warmUp(v, ask("hi"));
    expect((await send(v, ask("hi"))).text).toBe("tight");
    expect((await send(v, ask("hi", { max_tokens: 50_000 }))).text).toBe("roomy2");
  });

  it("when no target can hold it: 400 context_length_exceeded naming the largest window", async () => {
    const v = vars([small("s64", 64), small("s128", 128)]);
    await warmUp(v, ask("hi"));
    const r = await send(v, ask(long));
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe("context_length_exceeded");
    expect(r.error?.message).toMatch(/^This model's maximum context length is 128 tokens\. However, your messages resulted in \d+ tokens\./);
  });

  it("a server's own context error moves on to the next target (its window was not known)", async () => {
    const v = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-ce${tag}/fixture/error-context-exceeded` }, { kind: "llama", url: big("after") }] } });
    const r = await send(v, ask("hello"));
    expect(r).toMatchObject({ status: 200, text: "after", attempts: 2 });
    const only = await send(configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-cf${tag}/fixture/error-context-exceeded` }] } }), ask("hello"));
    expect(only.status).toBe(400);
    expect(only.error?.code).toBe("context_length_exceeded");
  });
});
