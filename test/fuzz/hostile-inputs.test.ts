// Every endpoint that takes a client's text, fed hostile bodies, and the chat path in prompt mode fed
// hostile model output (the fixture upstream streams it in 16-character frames): each answered with
// a 200 or a documented 4xx envelope, never a 5xx or a hang, within the work budget of the unit
// adversarial suite (test/unit/adversarial/budget.ts: a fixed allowance plus a per-KB one scaled by
// what a normal body of the same size costs). Each case climbs a ladder of sizes and stops at the
// first over budget, and each request is cut off at a deadline, so a superlinear path fails fast.
// For CI's time, as in the unit suite, every case climbs to 32 KB and goes on to 128 KB only where
// it could fail there (budget.ts, mayFailAt: a superlinear trend, or a cost already near the
// budget); a normal body's cost is measured once per endpoint and deployment.

import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL } from "../workerd/harness.ts";
import { ALWAYS_UP_TO, describeSteps, FIXED_MS, mayFailAt, MS_PER_KB, NORMAL_FACTOR, type Step } from "../unit/adversarial/budget.ts";
import { flood, NORMAL_ANSWER, NORMAL_CALL, normalCall, plainAnswer } from "../unit/adversarial/hostile-text.ts";
import { deployment, expectSafe, sent, type Answer } from "./fuzz-support.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const ANTHROPIC = { ...JSON_HEADERS, "anthropic-version": "2023-06-01" };
/** Sizes (characters of hostile text) a case climbs; ×4 a step. */
const LADDER = [2_000, 8_000, 32_000, 128_000];
/** A request that has not answered by this many budgets is cut off (a streamed one stops its work). */
const CUTOFF_BUDGETS = 4;
/** Nor by this: a case over budget fails within seconds, not minutes. */
const MAX_CUTOFF_MS = 8_000;

const TOOL = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };

interface Timed {
  answer?: Answer;
  ms: number;
  timedOut: boolean;
}

/**
 * One request, its whole body read, cut off after `cutoffMs` (at most MAX_CUTOFF_MS): a streamed
 * answer still running then is cancelled, so its work stops instead of slowing the next case.
 */
async function timed(path: string, body: string, headers: Record<string, string>, vars: Record<string, unknown>, cutoffMs: number): Promise<Timed> {
  const t0 = performance.now();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), Math.min(cutoffMs, MAX_CUTOFF_MS));
  sent.requests++;
  try {
    const { res, done } = await call(path, { method: "POST", headers, body, signal: abort.signal }, vars);
    void done().catch(() => {});
    const reader = res.body?.getReader();
    const cancel = () => void reader?.cancel().catch(() => {});
    abort.signal.addEventListener("abort", cancel);
    const decoder = new TextDecoder();
    let text = "";
    while (reader && !abort.signal.aborted) {
      const { done: end, value } = await reader.read();
      if (end) break;
      text += decoder.decode(value, { stream: true });
    }
    const ms = performance.now() - t0;
    return abort.signal.aborted ? { ms, timedOut: true } : { answer: { status: res.status, headers: res.headers, text }, ms, timedOut: false };
  } catch (e) {
    if (abort.signal.aborted) return { ms: performance.now() - t0, timedOut: true };
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** normalMsPerKb's answers, by deployment, then by path and body: each measured once per run. */
const normalCost = new WeakMap<Record<string, unknown>, Map<string, Promise<number>>>();

/** The median time of a normal request of the same endpoint (after one warm-up), per KB of its text. */
function normalMsPerKb(path: string, body: string, headers: Record<string, string>, vars: Record<string, unknown>, chars: number): Promise<number> {
  let byBody = normalCost.get(vars);
  if (!byBody) normalCost.set(vars, (byBody = new Map()));
  const key = `${path}\n${body}`;
  let cost = byBody.get(key);
  if (!cost) byBody.set(key, (cost = measureNormal(path, body, headers, vars, chars)));
  return cost;
}

async function measureNormal(path: string, body: string, headers: Record<string, string>, vars: Record<string, unknown>, chars: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t = await timed(path, body, headers, vars, 60_000);
    expect(t.answer?.status, `normal ${path}: ${t.answer?.text.slice(0, 200)}`).toBeLessThan(300);
    if (i > 0) times.push(t.ms);
  }
  return times.sort((a, b) => a - b)[1]! / (chars / 1000);
}

interface EndpointCase {
  path: string;
  headers?: Record<string, string>;
  vars: Record<string, unknown>;
  /** The hostile request body for about `chars` characters of hostile text. */
  body: (chars: number) => string;
  /** A normal body of about `chars` characters, for the budget's scale (default: none, the floor). */
  normal?: (chars: number) => string;
  /** Statuses the answer may have (default: any below 500, a 4xx with a documented envelope). */
  statuses?: number[];
  ladder?: number[];
}

/** Climbs the case's ladder: every answer safe, every size within budget, at most one size over it. */
async function climbEndpoint(c: EndpointCase): Promise<Step[]> {
  const headers = c.headers ?? JSON_HEADERS;
  const ladder = c.ladder ?? LADDER;
  const perKb = c.normal ? await normalMsPerKb(c.path, c.normal(32_000), headers, c.vars, 32_000) : 0;
  const steps: Step[] = [];
  for (const [i, chars] of ladder.entries()) {
    const body = c.body(chars);
    if (i >= ALWAYS_UP_TO && !mayFailAt(steps, body.length, perKb)) break;
    const budget = FIXED_MS + (body.length / 1000) * Math.max(MS_PER_KB, NORMAL_FACTOR * perKb);
    let t = await timed(c.path, body, headers, c.vars, CUTOFF_BUDGETS * budget);
    // Once more when just over: a neighbour's burst on a loaded machine is not the endpoint's cost.
    if (!t.timedOut && t.ms > budget) {
      const again = await timed(c.path, body, headers, c.vars, CUTOFF_BUDGETS * budget);
      if (again.ms < t.ms) t = again;
    }
    steps.push({ chars: body.length, ms: t.ms, budget });
    if (t.answer) {
      expectSafe(t.answer, `${c.path} (${body.length} characters)`);
      if (c.statuses) expect(c.statuses, `${c.path} (${body.length} characters): ${t.answer.text.slice(0, 200)}`).toContain(t.answer.status);
    }
    if (t.timedOut || t.ms > budget) break;
  }
  return steps;
}

const expectWithinBudget = (steps: Step[]) => {
  const over = steps.find((s) => s.ms > s.budget);
  expect(over, describeSteps(steps)).toBeUndefined();
};

// --- the model writes hostile text: chat, responses and messages in prompt mode, streamed ---

/** A prompt-mode model on the fixture upstream that streams `parts` (each [piece, times]) in 16-character frames. */
const writes = (parts: Array<[string, number]>) =>
  deployment(configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say-repeat/${encodeURIComponent(JSON.stringify({ parts, frame: 16 }))}`, tools: "prompt" }] } }));

/** The model writes `head`, then `unit` until about `chars`, then `tail`. */
const writesFlood = (head: string, unit: string, tail: string, chars: number) =>
  writes([[head, 1], [unit, Math.max(1, Math.ceil((chars - head.length - tail.length) / unit.length))], [tail, 1]]);

const chatBody = (stream: boolean, tools: unknown[] = [TOOL]) => JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "Weather in Paris?" }], tools });

/** Model output families, each as the model would stream it (issue 26's findings first). */
const MODEL_WRITES: Record<string, [head: string, unit: string, tail: string]> = {
  "{ and a flood of spaces": ["{", " ", "x"],
  "[TOOL_CALLS]f, a flood of spaces, x": ["[TOOL_CALLS]f", " ", "x"],
  "<tool_call>f and <arg_key>a</arg_key> repeated": ["<tool_call>f", "<arg_key>a</arg_key>", ""],
  "<tool_call> and <function=a> repeated": ["<tool_call>", "<function=a>", ""],
  "<tool_call> repeated": ["", "<tool_call>", ""],
  "<function= and a flood of spaces": ["<function=", " ", "x"],
  "```json and { and a flood of spaces": ["```json\n{", " ", "x"],
  "[[[[…": ["", "[", ""],
  "{{{{…": ["", "{", ""],
  "many tagged calls": ["", '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}</tool_call>\n', ""],
  "a huge near-miss name": ['<tool_call>{"name": "get_weathe', "r", '", "arguments": {}}</tool_call>'],
};

/** The chat-shaped endpoints that run the rewriter over a prompt-mode model's output. */
const REWRITING_ENDPOINTS: Record<string, { path: string; headers?: Record<string, string>; body: (stream: boolean) => string }> = {
  "/v1/chat/completions": { path: "/v1/chat/completions", body: (stream) => chatBody(stream) },
  "/v1/responses": {
    path: "/v1/responses",
    body: (stream) => JSON.stringify({ model: "m", stream, store: false, input: "Weather in Paris?", tools: [{ type: "function", name: "get_weather", parameters: TOOL.function.parameters }] }),
  },
  "/v1/messages": {
    path: "/v1/messages",
    headers: ANTHROPIC,
    body: (stream) => JSON.stringify({ model: "m", stream, max_tokens: 64, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [{ name: "get_weather", input_schema: TOOL.function.parameters }] }),
  },
};

describe("the model writes hostile text (prompt mode, streamed in 16-character frames)", () => {
  for (const [family, [head, unit, tail]] of Object.entries(MODEL_WRITES)) {
    it(`/v1/chat/completions, stream: ${family}`, { timeout: 120_000 }, async () => {
      const steps = await climbModelOutput("/v1/chat/completions", true, head, unit, tail);
      expectWithinBudget(steps);
    });
  }
  for (const [name, endpoint] of Object.entries(REWRITING_ENDPOINTS)) {
    for (const stream of [true, false]) {
      if (name === "/v1/chat/completions" && stream) continue;
      it(`${name}, stream: ${stream}: { and a flood of spaces, <tool_call> repeated`, { timeout: 120_000 }, async () => {
        for (const [head, unit, tail] of [MODEL_WRITES["{ and a flood of spaces"]!, MODEL_WRITES["<tool_call> repeated"]!]) {
          expectWithinBudget(await climbModelOutput(name, stream, head, unit, tail));
        }
      });
    }
  }

  it("/v1/chat/completions: a catastrophic patternProperties against the model's near-miss key", { timeout: 120_000 }, async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", patternProperties: { "^(a+)+$": {} } } } }];
    const steps: Step[] = [];
    for (const k of [16, 20, 24, 28]) {
      const vars = writes([[`<tool_call>{"name": "f", "arguments": {"${"a".repeat(k)}!": 1}}</tool_call>`, 1]]);
      let t = await timed("/v1/chat/completions", chatBody(false, tools), JSON_HEADERS, vars, CUTOFF_BUDGETS * FIXED_MS);
      // Once more when just over, as the ladders do: a backtracking matcher takes 16× longer at each
      // step of 4, a neighbour's burst on a loaded machine (seen: 88 ms, then 224) not twice over.
      if (!t.timedOut && t.ms > FIXED_MS) {
        const again = await timed("/v1/chat/completions", chatBody(false, tools), JSON_HEADERS, vars, CUTOFF_BUDGETS * FIXED_MS);
        if (again.ms < t.ms) t = again;
      }
      steps.push({ chars: k, ms: t.ms, budget: FIXED_MS });
      if (t.answer) expectSafe(t.answer, `near-miss key of ${k}`);
      if (t.timedOut || t.ms > FIXED_MS) break;
    }
    expectWithinBudget(steps);
  });
});

/** What a normal model output (an answer, a call) costs per KB through an endpoint, measured once per run. */
const normalOutput = new Map<string, number>();
async function normalOutputMsPerKb(name: string, stream: boolean): Promise<number> {
  const key = `${name} ${stream}`;
  if (!normalOutput.has(key)) {
    const endpoint = REWRITING_ENDPOINTS[name]!;
    const [body, headers] = [endpoint.body(stream), endpoint.headers ?? JSON_HEADERS];
    const answer = await normalMsPerKb(endpoint.path, body, headers, writesFlood(...NORMAL_ANSWER, 32_000), 32_000);
    const call = await normalMsPerKb(endpoint.path, body, headers, writesFlood(...NORMAL_CALL, 32_000), 32_000);
    normalOutput.set(key, Math.max(answer, call));
  }
  return normalOutput.get(key)!;
}

/** The endpoint's request against a model that writes head + unit… + tail, up the ladder. */
async function climbModelOutput(name: string, stream: boolean, head: string, unit: string, tail: string): Promise<Step[]> {
  const endpoint = REWRITING_ENDPOINTS[name]!;
  const perKb = await normalOutputMsPerKb(name, stream);
  const steps: Step[] = [];
  for (const [i, chars] of LADDER.entries()) {
    if (i >= ALWAYS_UP_TO && !mayFailAt(steps, chars, perKb)) break;
    const vars = writesFlood(head, unit, tail, chars);
    const budget = FIXED_MS + (chars / 1000) * Math.max(MS_PER_KB, NORMAL_FACTOR * perKb);
    let t = await timed(endpoint.path, endpoint.body(stream), endpoint.headers ?? JSON_HEADERS, vars, CUTOFF_BUDGETS * budget);
    if (!t.timedOut && t.ms > budget) {
      const again = await timed(endpoint.path, endpoint.body(stream), endpoint.headers ?? JSON_HEADERS, vars, CUTOFF_BUDGETS * budget);
      if (again.ms < t.ms) t = again;
    }
    steps.push({ chars, ms: t.ms, budget });
    if (t.answer) {
      expectSafe(t.answer, `${name} (${chars} characters of model output)`);
      expect(t.answer.status, t.answer.text.slice(0, 200)).toBe(200);
    }
    if (t.timedOut || t.ms > budget) break;
  }
  return steps;
}

// --- the client sends hostile text ---

const rewriteBody = (text: string, tools: unknown[] = [TOOL]) => JSON.stringify({ tools, text });

describe("POST /v1/tool_calls/rewrite: hostile text", () => {
  const vars = deployment();
  const TEXTS: Record<string, (chars: number) => string> = {
    "[TOOL_CALLS]f, a flood of spaces, x": (n) => flood("[TOOL_CALLS]f", " ", n, "x"),
    "<tool_call>f and <arg_key>a</arg_key> repeated": (n) => flood("<tool_call>f", "<arg_key>a</arg_key>", n),
    "<tool_call> and <function=a> repeated": (n) => flood("<tool_call>", "<function=a>", n),
    "{ and a flood of spaces": (n) => flood("{", " ", n, "x"),
    "<tool_call> repeated": (n) => flood("", "<tool_call>", n),
    "[[[[…": (n) => flood("", "[", n),
    "{{{{…": (n) => flood("", "{", n),
    "deep JSON arguments": (n) => '<tool_call>{"name": "get_weather", "arguments": ' + '{"a":'.repeat(n / 6) + "1" + "}".repeat(n / 6) + "}</tool_call>",
    "a huge key": (n) => flood('<tool_call>{"name": "get_weather", "arguments": {"', "k", n, '": 1}}</tool_call>'),
    "many calls": (n) => flood("", '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}</tool_call>\n', n),
    // Each fence looks into the next one (detect-markers.ts fence() → classifyAt → action() → fence()).
    "Action: ```json repeated": (n) => flood("", "Action: ```json\n", n),
    "functools[ repeated": (n) => flood("", "functools[", n),
  };
  for (const [name, text] of Object.entries(TEXTS)) {
    it(name, { timeout: 120_000 }, async () => {
      expectWithinBudget(await climbEndpoint({ path: "/v1/tool_calls/rewrite", vars, body: (n) => rewriteBody(text(n)), normal: (n) => rewriteBody(normalCall(n)), statuses: [200, 400, 413] }));
    });
  }

  it("catastrophic regexes in the schema against near-miss keys and values", { timeout: 120_000 }, async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", patternProperties: { "^(a+)+$": {} }, properties: { s: { type: "string", pattern: "(x+x+)+y" } } } } }];
    const text = (k: number) => `<tool_call>{"name": "f", "arguments": {"${"a".repeat(k)}!": 1, "s": "${"x".repeat(k)}"}}</tool_call>`;
    // Near-miss lengths, not characters: ×16 the backtracking a step, so the old engine takes seconds, not hours.
    expectWithinBudget(await climbEndpoint({ path: "/v1/tool_calls/rewrite", vars, body: (k) => rewriteBody(text(k), tools), ladder: [16, 20, 24, 28], statuses: [200, 400] }));
  });
});

/** A tool by the API's shape: chat (and the rewrite endpoint), responses, messages. */
const toolAs = (api: "chat" | "responses" | "messages", name: string, parameters: Record<string, unknown>) =>
  api === "chat" ? { type: "function", function: { name, parameters } } : api === "responses" ? { type: "function", name, parameters } : { name, input_schema: parameters };

/** Every endpoint that takes a client's text, its body around a hostile piece. */
const ENDPOINTS: Array<{ path: string; api: "chat" | "responses" | "messages" | "none"; headers?: Record<string, string>; vars?: Record<string, unknown>; body: (text: string, model?: string, tools?: unknown[]) => string }> = [
  { path: "/v1/chat/completions", api: "chat", body: (t, model = "m", tools) => JSON.stringify({ model, max_tokens: 4, messages: [{ role: "user", content: t }], ...(tools ? { tools } : {}) }) },
  { path: "/v1/responses", api: "responses", body: (t, model = "m", tools) => JSON.stringify({ model, store: false, max_output_tokens: 4, input: t, ...(tools ? { tools } : {}) }) },
  { path: "/v1/messages", api: "messages", headers: ANTHROPIC, body: (t, model = "m", tools) => JSON.stringify({ model, max_tokens: 4, messages: [{ role: "user", content: t }], ...(tools ? { tools } : {}) }) },
  { path: "/v1/messages/count_tokens", api: "messages", headers: ANTHROPIC, body: (t, model = "m", tools) => JSON.stringify({ model, messages: [{ role: "user", content: t }], ...(tools ? { tools } : {}) }) },
  { path: "/v1/completions", api: "none", body: (t, model = "m") => JSON.stringify({ model, max_tokens: 4, prompt: t }) },
  { path: "/v1/embeddings", api: "none", vars: configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/embed` }] } }), body: (t, model = "m") => JSON.stringify({ model, input: [t] }) },
  { path: "/v1/tool_calls/rewrite", api: "chat", body: (t, _model, tools = [TOOL]) => JSON.stringify({ tools, text: t }) },
];

/** Hostile prompt text (what a client writes into a message, a prompt or an input). */
const PROMPTS: Record<string, (chars: number) => string> = {
  "a whitespace flood": (n) => flood("", " \n", n),
  "markers repeated": (n) => flood("", "<think></think><tool_call>[TOOL_CALLS]<|channel|>", n),
  "an unclosed reasoning block and a flood": (n) => flood("<think>", " ", n),
  "[[[[…": (n) => flood("", "[", n),
};

describe("every endpoint: hostile client text", () => {
  for (const endpoint of ENDPOINTS) {
    const vars = deployment(endpoint.vars ?? {});
    for (const [name, text] of Object.entries(PROMPTS)) {
      it(`${endpoint.path}: ${name}`, { timeout: 120_000 }, async () => {
        expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: (n) => endpoint.body(text(n)), normal: (n) => endpoint.body(plainAnswer(n)) }));
      });
    }

    // (The rewrite endpoint takes no model.)
    if (endpoint.path !== "/v1/tool_calls/rewrite") it(`${endpoint.path}: a huge model name`, { timeout: 120_000 }, async () => {
      expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: (n) => endpoint.body("hi", "m".repeat(n)), normal: (n) => endpoint.body(plainAnswer(n)), statuses: [400, 404] }));
    });

    if (endpoint.api === "none") continue;
    const api = endpoint.api;
    const withTools = (tools: unknown[]) => endpoint.body("Weather in Paris?", "m", tools);

    it(`${endpoint.path}: a huge tool name, and many tools`, { timeout: 120_000 }, async () => {
      const huge = (n: number) => withTools([toolAs(api, `get_weather${"r".repeat(n)}`, { type: "object" }), toolAs(api, `get_weather${"r".repeat(n - 1)}s`, { type: "object" })]);
      expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: huge, normal: (n) => endpoint.body(plainAnswer(n)) }));
      const many = (n: number) => withTools(Array.from({ length: Math.ceil(n / 80) }, (_, i) => toolAs(api, `tool_${i}`, { type: "object", properties: { q: { type: "string" } } })));
      expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: many, normal: (n) => endpoint.body(plainAnswer(n)) }));
    });

    it(`${endpoint.path}: a deep and a wide tool schema`, { timeout: 120_000 }, async () => {
      const deep = (n: number) => {
        let schema: Record<string, unknown> = { type: "string" };
        for (let i = 0; i < n / 40; i++) schema = { type: "object", properties: { a: schema } };
        return withTools([toolAs(api, "get_weather", schema)]);
      };
      expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: deep, normal: (n) => endpoint.body(plainAnswer(n)) }));
      const wide = (n: number) => {
        const properties: Record<string, unknown> = {};
        for (let i = 0; i < n / 40; i++) properties[`p${i}`] = { type: "string", enum: ["a", "b"] };
        return withTools([toolAs(api, "get_weather", { type: "object", properties, required: Object.keys(properties) })]);
      };
      expectWithinBudget(await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: wide, normal: (n) => endpoint.body(plainAnswer(n)) }));
    });

    it(`${endpoint.path}: catastrophic regexes in a tool's schema`, { timeout: 120_000 }, async () => {
      const schema = { type: "object", patternProperties: { "^(a+)+$": {}, "(x+x+)+y": {} }, properties: { s: { type: "string", pattern: "(a|a)*b" } }, propertyNames: { pattern: "^(a+)+$" } };
      const steps = await climbEndpoint({ path: endpoint.path, headers: endpoint.headers, vars, body: () => withTools([toolAs(api, "get_weather", schema)]), ladder: [0] });
      expectWithinBudget(steps);
    });
  }
});
