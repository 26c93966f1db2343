import { describe, expect, it } from "vitest";
import { validateChatRequest } from "../../../src/api/chat/index.ts";
import { convertMessagesRequest } from "../../../src/api/messages/convert-request.ts";
import { convertResponsesRequest } from "../../../src/api/responses/convert-request.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { checkLlamaFields, LLAMA_FIELDS, MAX_PROBS } from "../../../src/schemas/llama-fields.ts";
import { CompletionsRequestSchema } from "../../../src/schemas/completions-request.ts";
import { EmbeddingsRequestSchema } from "../../../src/schemas/embeddings-request.ts";
import { MessagesRequestSchema } from "../../../src/schemas/messages-request.ts";
import { ResponsesRequestSchema } from "../../../src/schemas/responses-request.ts";

// Issue 40, finding 4: llama-server's own work multipliers (n_cmpl is n under another name) passed
// through every door as unknown fields. One table decides each; every API's body is checked by it.

const messages = [{ role: "user", content: "hi" }];
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as { status: number; code: string; param: string; message: string };
  }
  return null;
};

/** Every door's body validation, with `extra` fields on an otherwise valid body. */
const DOORS: Array<[string, (extra: Record<string, unknown>) => unknown]> = [
  ["chat", (extra) => validateChatRequest({ model: "m", messages, ...extra })],
  ["completions", (extra) => validateBody(CompletionsRequestSchema, { model: "m", prompt: "hi", ...extra })],
  ["responses", (extra) => validateBody(ResponsesRequestSchema, { model: "m", input: "hi", ...extra })],
  ["messages", (extra) => validateBody(MessagesRequestSchema, { model: "m", max_tokens: 8, messages, ...extra })],
  ["embeddings", (extra) => validateBody(EmbeddingsRequestSchema, { model: "m", input: "hi", ...extra })],
];

describe("the llama-server field table", () => {
  it("refuses n_cmpl > 1 on every door with 400 unsupported_parameter naming the field", () => {
    for (const [door, validate] of DOORS) {
      expect(refusal(() => validate({ n_cmpl: 4 })), door).toMatchObject({ status: 400, code: "unsupported_parameter", param: "n_cmpl" });
      expect(refusal(() => validate({ n_cmpl: 1 })), door).toBeNull();
      expect(refusal(() => validate({ n_cmpl: null })), door).toBeNull();
    }
  });

  it("refuses n > 1 on the doors whose conversion forwards it (Responses, Messages), as chat always did", () => {
    for (const [door, validate] of DOORS) {
      expect(refusal(() => validate({ n: 3 })), door).toMatchObject({ code: "unsupported_parameter", param: "n", message: "Only n=1 is supported; send one request per completion." });
    }
  });

  it("the Messages and Responses conversions keep unknown fields: the table must see them before", () => {
    const m = convertMessagesRequest(validateBody(MessagesRequestSchema, { model: "m", max_tokens: 8, messages, top_k: 5 }));
    expect(m).toMatchObject({ top_k: 5 });
    const r = convertResponsesRequest(validateBody(ResponsesRequestSchema, { model: "m", input: "hi", top_k: 5 }), undefined);
    expect(r.chat).toMatchObject({ top_k: 5 });
  });

  it("bounds n_probs, top_logprobs and a numeric logprobs to 20 with 400 invalid_value; chat's logprobs: true passes", () => {
    for (const field of ["n_probs", "top_logprobs"]) {
      expect(refusal(() => validateChatRequest({ model: "m", messages, logprobs: true, [field]: 21 }))).toMatchObject({ code: "invalid_value", param: field });
      expect(refusal(() => validateChatRequest({ model: "m", messages, logprobs: true, [field]: MAX_PROBS }))).toBeNull();
    }
    expect(refusal(() => validateChatRequest({ model: "m", messages, logprobs: 100_000 }))).toMatchObject({ code: "invalid_value", param: "logprobs" });
    expect(refusal(() => validateChatRequest({ model: "m", messages, logprobs: true }))).toBeNull();
    expect(refusal(() => validateBody(CompletionsRequestSchema, { model: "m", prompt: "hi", n_probs: 1e9 }))).toMatchObject({ param: "n_probs" });
  });

  it("refuses a client's slot, LoRA adapters, context-shift size, verbose and backend sampling; their defaults pass", () => {
    const cases: Array<[string, unknown, unknown]> = [
      ["id_slot", 0, -1],
      ["lora", [{ id: 0, scale: 1 }], []],
      ["n_discard", 1, 0],
      ["verbose", true, false],
      ["backend_sampling", true, false],
    ];
    for (const [field, bad, ok] of cases) {
      for (const [door, validate] of DOORS) {
        expect(refusal(() => validate({ [field]: bad })), `${door} ${field}`).toMatchObject({ status: 400, code: "unsupported_parameter", param: field });
        expect(refusal(() => validate({ [field]: ok })), `${door} ${field}`).toBeNull();
      }
    }
  });

  it("bounds samplers (a sampler listed again runs again on every token) and the penalty windows (a buffer each)", () => {
    expect(refusal(() => checkLlamaFields({ samplers: Array(17).fill("top_k") }))).toMatchObject({ code: "invalid_value", param: "samplers" });
    expect(refusal(() => checkLlamaFields({ samplers: "k".repeat(100_000) }))).toMatchObject({ param: "samplers" });
    expect(refusal(() => checkLlamaFields({ samplers: ["dry", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"] }))).toBeNull();
    expect(refusal(() => checkLlamaFields({ repeat_last_n: 2 ** 31 - 1 }))).toMatchObject({ param: "repeat_last_n" });
    expect(refusal(() => checkLlamaFields({ dry_penalty_last_n: 2 ** 31 - 1 }))).toMatchObject({ param: "dry_penalty_last_n" });
    expect(refusal(() => checkLlamaFields({ repeat_last_n: 64, dry_penalty_last_n: 64 }))).toBeNull();
  });

  it("passes what was reviewed as harmless, and fields it does not list", () => {
    const passed = { cache_prompt: false, n_keep: -1, n_predict: 10, t_max_predict_ms: 100, n_indent: 2, return_tokens: true, post_sampling_probs: true, top_k: 0, grammar: "root ::= \"x\"" };
    expect(refusal(() => checkLlamaFields(passed))).toBeNull();
    for (const rule of Object.values(LLAMA_FIELDS)) expect("pass" in rule ? rule.pass : rule.why).not.toBe("");
  });
});
