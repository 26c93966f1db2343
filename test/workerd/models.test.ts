import { describe, expect, it } from "vitest";
import { call, configWith, LLAMA_URL } from "./harness.ts";

const anthropic = { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-client" };

async function llamaProps() {
  return (await (await fetch(`${LLAMA_URL}/props`)).json()) as any;
}

describe("GET /v1/models: what every client reads", () => {
  it("zero config: each entry has the llama-server's per-slot context and the capabilities", async () => {
    const props = await llamaProps();
    const nCtx = props.default_generation_settings.n_ctx;
    expect(nCtx).toBeGreaterThan(0);
    const { res } = await call("/v1/models");
    const body = (await res.json()) as any;
    expect(body.object).toBe("list");
    expect(body.data[0]).toMatchObject({
      object: "model",
      owned_by: "llamacpp",
      context_window: nCtx,
      context_length: nCtx,
      max_model_len: nCtx,
      capabilities: { tools: true, vision: props.modalities?.vision === true, reasoning: expect.any(Boolean) },
    });
  });

  it("declared: read from the first llama target's /props; a browser-only or unreachable model lists without them", async () => {
    const nCtx = (await llamaProps()).default_generation_settings.n_ctx;
    const vars = configWith({
      local: { targets: [{ kind: "browser", model: "x" }, { kind: "llama", url: LLAMA_URL }] },
      page: { targets: [{ kind: "browser", model: "x" }] },
      gone: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }] },
    });
    const started = Date.now();
    const { res } = await call("/v1/models", {}, vars);
    expect(Date.now() - started).toBeLessThan(3000);
    const data = ((await res.json()) as any).data as any[];
    expect(data.map((m) => m.id)).toEqual(["local", "page", "gone"]);
    expect(data[0]).toMatchObject({ owned_by: "switchyard", context_window: nCtx, context_length: nCtx, max_model_len: nCtx, capabilities: { tools: true } });
    for (const m of data.slice(1)) {
      expect(Object.keys(m).sort()).toEqual(["created", "id", "object", "owned_by"]);
    }
    const one = await call("/v1/models/local", {}, vars);
    expect(await one.res.json()).toMatchObject({ id: "local", context_window: nCtx });
  });

  it("with anthropic-version: Anthropic's list and model shapes, and its error shape", async () => {
    const nCtx = (await llamaProps()).default_generation_settings.n_ctx;
    const vars = configWith({ a: { targets: [{ kind: "llama", url: LLAMA_URL }] }, b: { targets: [{ kind: "browser", model: "x" }] } });
    const { res } = await call("/v1/models?beta=true", { headers: anthropic }, vars);
    expect(await res.json()).toEqual({
      data: [
        // The SDK's ModelInfo requires every field: what does not apply (or is unknown) is null.
        { type: "model", id: "a", display_name: "a", created_at: "1970-01-01T00:00:00Z", max_input_tokens: nCtx, max_tokens: null, capabilities: null },
        { type: "model", id: "b", display_name: "b", created_at: "1970-01-01T00:00:00Z", max_input_tokens: null, max_tokens: null, capabilities: null },
      ],
      has_more: false,
      first_id: "a",
      last_id: "b",
    });
    const one = await call("/v1/models/b?beta=true", { headers: anthropic }, vars);
    expect(await one.res.json()).toEqual({ type: "model", id: "b", display_name: "b", created_at: "1970-01-01T00:00:00Z", max_input_tokens: null, max_tokens: null, capabilities: null });
    const missing = await call("/v1/models/nope", { headers: anthropic }, vars);
    expect(missing.res.status).toBe(404);
    expect(await missing.res.json()).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_not_found" }, request_id: missing.res.headers.get("x-request-id") });

    const zero = await call("/v1/models", { headers: anthropic });
    const listed = (await zero.res.json()) as any;
    expect(listed).toMatchObject({ has_more: false, first_id: listed.data[0].id, last_id: listed.data.at(-1).id });
    expect(listed.data[0]).toMatchObject({ type: "model", max_input_tokens: nCtx });
    expect(Date.parse(listed.data[0].created_at)).not.toBeNaN();
  });
});

describe("GET /v1/models/{id} with declared models", () => {
  it("an id that names an Object.prototype member is an unknown model (404), not a 500", async () => {
    const vars = configWith({ tiny: { targets: [{ kind: "llama", url: LLAMA_URL }] } });
    for (const id of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      const { res } = await call(`/v1/models/${id}`, {}, vars);
      expect(res.status, id).toBe(404);
      expect(((await res.json()) as any).error.code, id).toBe("model_not_found");
    }
  });
});
