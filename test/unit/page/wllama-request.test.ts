// The page's GGUF engine: a relay body → wllama's parameters, and the link that starts serving.
import { describe, expect, it } from "vitest";
import { threadsFor, wllamaParams } from "../../../worker/engines/wllama-request.ts";
import { readServeLink } from "../../../worker/serve-link.ts";

describe("wllamaParams", () => {
  it("passes llama.cpp's own fields through (the usage chunk asked for), streams, and drops the model id", () => {
    const body = { model: "tiny", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "Hel" }], grammar: 'root ::= "lo"', seed: 7, max_tokens: 9, stream: true, stream_options: { include_usage: true } };
    expect(wllamaParams(body)).toEqual({ messages: body.messages, grammar: 'root ::= "lo"', seed: 7, max_tokens: 9, stream: true, stream_options: { include_usage: true } });
  });

  it("turns web-llm's json_object + schema string back into llama.cpp's json_schema", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    expect(wllamaParams({ response_format: { type: "json_object", schema: JSON.stringify(schema) } }).response_format).toEqual({ type: "json_schema", json_schema: { name: "answer", schema } });
    expect(wllamaParams({ response_format: { type: "json_object", schema: "{not json" } }).response_format).toEqual({ type: "json_object" });
    expect(wllamaParams({ response_format: { type: "json_object" } }).response_format).toEqual({ type: "json_object" });
  });
});

describe("threadsFor", () => {
  it("one thread unless cross-origin isolated, then half the cores, 2 to 4", () => {
    expect(threadsFor({ crossOriginIsolated: false, hardwareConcurrency: 16 })).toBe(1);
    expect(threadsFor({ crossOriginIsolated: true, hardwareConcurrency: 2 })).toBe(2);
    expect(threadsFor({ crossOriginIsolated: true, hardwareConcurrency: 6 })).toBe(3);
    expect(threadsFor({ crossOriginIsolated: true, hardwareConcurrency: 32 })).toBe(4);
  });
});

describe("readServeLink", () => {
  const fresh = () => {
    const items = new Map<string, string>();
    const storage = { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), removeItem: (k: string) => void items.delete(k) };
    const urls: string[] = [];
    return { storage, urls, history: { replaceState: (_s: unknown, _t: string, url?: string | URL | null) => void urls.push(String(url)) } };
  };

  it("#serve=<token>&model=<id>&start=1: the token and the start kept for the tab, the fragment gone", () => {
    const { storage, urls, history } = fresh();
    expect(readServeLink({ hash: "#serve=tok%2Fen&model=tiny-qwen2-v1&start=1", pathname: "/", search: "" }, storage, history)).toEqual({ token: "tok/en", model: "tiny-qwen2-v1", start: true });
    expect(urls).toEqual(["/"]);
    // A reload (no fragment) serves again.
    expect(readServeLink({ hash: "", pathname: "/", search: "" }, storage, history)).toEqual({ token: "tok/en", model: "tiny-qwen2-v1", start: true });
  });

  it("without start=1 the model is only preselected; a new link without it clears an old start", () => {
    const { storage, history } = fresh();
    readServeLink({ hash: "#serve=t&model=a&start=1", pathname: "/", search: "" }, storage, history);
    expect(readServeLink({ hash: "#serve=t&model=b", pathname: "/", search: "" }, storage, history)).toEqual({ token: "t", model: "b", start: false });
    expect(readServeLink({ hash: "#serve=t", pathname: "/", search: "" }, storage, history)).toEqual({ token: "t", model: null, start: false });
  });
});
