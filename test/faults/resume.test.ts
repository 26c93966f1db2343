import { describe, expect, it } from "vitest";
import { FAST, chat, fixture, fixtureLog, llama, outcome, vars } from "./fault-harness.ts";
import { parseSse } from "../workerd/harness.ts";

// Continuing an answer on another target when its upstream fails mid-answer (src/routing/continuation/),
// through the whole Worker against the fixture upstream: `behave/continue/<text>` is a --jinja
// llama-server continuing a trailing assistant message as docs/reliability.md measured it (the
// prefill echoed joined to the first new piece); `behave/say/<text>` answers from the start, as a
// server that does not continue. The real llama-server killed mid-answer: test/faults/llama-killed.test.mjs.

const TEXT = "Paris is the capital of France.";
const cont = (text = TEXT) => llama(fixture(`behave/continue/${encodeURIComponent(text)}`));
const errorMid = (text: string) => llama(fixture(`behave/error-frame-mid/${encodeURIComponent(text)}`));
const host = (t: { url: string }) => `llama:${new URL(t.url).host}`;

type Ext = { target: string; attempts: number; resumes?: Array<{ from: string; to: string; code: string; after_chars: number; after_tokens: number }> };

/** Stream: the text, the finish, the ids, the usage and x_switchyard the client saw. */
async function streamed(targets: unknown[], extra: Record<string, unknown> = {}, body: Record<string, unknown> = {}) {
  const { res } = await chat({ stream: true, vars: vars(targets, extra), body: { stream_options: { include_usage: true }, ...body } });
  const { frames, done } = parseSse(await res.text());
  return {
    status: res.status,
    done,
    text: frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join(""),
    ids: new Set(frames.filter((f) => f.id).map((f) => f.id)),
    finish: frames.map((f) => f.choices?.[0]?.finish_reason).filter(Boolean),
    error: frames.find((f) => f.error)?.error as { code: string; message: string } | undefined,
    usage: frames.find((f) => f.usage)?.usage as { prompt_tokens: number; completion_tokens: number } | undefined,
    ext: frames.find((f) => f.x_switchyard)?.x_switchyard as Ext | undefined,
  };
}

describe("an answer continued on another target", () => {
  it("a connection reset mid-answer: the next server continues, one id, no text repeated or lost", async () => {
    const [a, b] = [llama(fixture("behave/reset-mid")), cont("Paris is lovely")];
    const r = await streamed([a, b]);
    expect(r).toMatchObject({ status: 200, done: true, text: "Paris is lovely", finish: ["stop"], error: undefined });
    expect(r.ids.size).toBe(1);
    expect(r.ext).toMatchObject({ target: host(b), attempts: 2, resumes: [{ from: host(a), to: host(b), code: "upstream_error", after_chars: 3, after_tokens: 1 }] });
    // The continuation was asked with what was written as a trailing assistant message.
    const sent = (await fixtureLog<{ path: string; body: string }>("_requests")).filter((q) => q.path.includes("/behave/continue/Paris%20is%20lovely/v1/chat/completions")).at(-1)!;
    expect(JSON.parse(sent.body).messages.at(-1)).toEqual({ role: "assistant", content: "Par" });
  });

  it("non-stream: the client gets one whole answer, never knowing", async () => {
    const [a, b] = [errorMid("Paris is"), cont()];
    const { res } = await chat({ stream: false, vars: vars([a, b]) });
    const body = await res.json<{ id: string; choices: Array<{ message: { content: string }; finish_reason: string }>; usage: { completion_tokens: number; prompt_tokens: number }; x_switchyard: Ext }>();
    expect(res.status).toBe(200);
    expect(body.choices[0]).toMatchObject({ message: { content: TEXT }, finish_reason: "stop" });
    expect(body.x_switchyard.resumes).toEqual([{ from: host(a), to: host(b), code: "upstream_error", after_chars: 8, after_tokens: 2 }]);
    // Usage: the 2 pieces written before plus the continuation's 5; its prompt (3 + the prefill's 3
    // tokens by its /tokenize) less the prefill's tokens: the original prompt's 3 (the 2 deltas would give 4).
    expect(body.usage).toMatchObject({ completion_tokens: 2 + 5, prompt_tokens: 3 });
  });

  it("an error frame and a stall mid-answer are continued too", async () => {
    const e = await streamed([errorMid("Paris is the"), cont()]);
    expect(e).toMatchObject({ text: TEXT, finish: ["stop"], done: true });
    const stall = await streamed([llama(fixture("behave/stall-after-first/5000")), cont("Hello, world")]);
    expect(stall).toMatchObject({ text: "Hello, world", finish: ["stop"], done: true });
    expect(stall.ext?.resumes?.[0]).toMatchObject({ code: "upstream_timeout", after_chars: 5 });
  });

  it("at most resume.maxResumes times: past it the failure is the error frame", async () => {
    const twice = () => [errorMid("Paris"), errorMid("Paris is the"), cont()];
    const once = await streamed(twice(), { resume: { maxResumes: 1 } });
    expect(once).toMatchObject({ text: "Paris is the", done: false, finish: [] });
    expect(once.error?.code).toBe("upstream_error");
    const allowed = await streamed(twice(), { resume: { maxResumes: 2 } });
    expect(allowed).toMatchObject({ text: TEXT, done: true, finish: ["stop"] });
    expect(allowed.ext?.resumes?.map((r) => r.after_chars)).toEqual([5, 12]);
    expect(allowed.ext?.attempts).toBe(3);
  });

  it("an answer cut by the request's own timeouts.totalMs is not continued: it would be as long anywhere", async () => {
    // One token every 50 ms, for ever: the upstream keeps its pace (idle 300 ms), the 1.5 s total ends it.
    const r = await streamed([llama(fixture("behave/endless")), cont()]);
    expect(r).toMatchObject({ status: 200, done: false, finish: [] });
    expect(r.error?.code).toBe("upstream_timeout");
    expect(r.error?.message).toContain("timeouts.totalMs");
    expect(r.ext?.resumes).toBeUndefined();
    expect(r.text).toMatch(/^t0 t1 /);
  });

  it("off for a model: the error frame", async () => {
    const cfg = { SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [errorMid("Paris is"), cont()], resume: { maxResumes: 0 } } }, timeouts: FAST }) };
    const { res } = await chat({ stream: true, vars: cfg });
    const { frames, done } = parseSse(await res.text());
    expect(done).toBe(false);
    expect(frames.at(-1)?.error?.code).toBe("upstream_error");
  });
});

describe("what is never continued: the failure stands as the error frame", () => {
  it("a tool call in progress (its partial arguments cannot be handed back as written)", async () => {
    const r = await streamed([llama(fixture("behave/reset-mid-tool-call")), cont()], {}, { tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }] });
    expect(r.done).toBe(false);
    expect(r.error?.code).toBe("upstream_error");
    expect(r.ext).toBeUndefined();
  });

  it("logprobs (n > 1 is refused before anything starts: 400 unsupported_parameter)", async () => {
    for (const body of [{ logprobs: true }, { logprobs: true, top_logprobs: 2 }]) {
      const r = await streamed([errorMid("Paris is"), cont()], {}, body);
      expect(r.error?.code, JSON.stringify(body)).toBe("upstream_error");
      expect(r.text).toBe("Paris is");
    }
  });

  it("a target that answers afresh instead of continuing: nothing of it reaches the client", async () => {
    const r = await streamed([errorMid("Paris is"), llama(fixture(`behave/say/${encodeURIComponent("Something else entirely")}`))]);
    expect(r.text).toBe("Paris is");
    expect(r.error?.code).toBe("upstream_error");
    expect(r.error?.message).toMatch(/began a different one/);
  });

  it("no other target: the error frame, as before", async () => {
    const r = await streamed([errorMid("Paris is")]);
    expect(r).toMatchObject({ text: "Paris is", done: false });
    expect(r.error?.code).toBe("upstream_error");
  });
});
