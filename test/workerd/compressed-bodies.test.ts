import { describe, expect, it } from "vitest";
import { call, configWith, grammar, LLAMA_URL, readSse, text } from "./harness.ts";

// A compressed request body (Codex sends zstd to its built-in provider; other clients gzip) is
// answered like the plain one, on every JSON endpoint, from a real llama-server.

const models = configWith({ m: { targets: [{ kind: "llama", url: LLAMA_URL }] } });
const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 32, grammar: grammar("Compressed fine.") };

async function compressed(format: "gzip" | "deflate" | "deflate-raw", json: unknown): Promise<Uint8Array> {
  const stream = new Blob([JSON.stringify(json)]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A zstd frame of 800 RLE blocks of 128 KiB of spaces: 100 MiB of JSON whitespace from 3.2 KB. */
function zstdBomb(): Uint8Array {
  const blocks = 800;
  const out = new Uint8Array(6 + blocks * 4);
  out.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3]);
  for (let i = 0; i < blocks; i++) {
    const header = (131072 << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    out.set([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x20], 6 + i * 4);
  }
  return out;
}

const post = (path: string, bytes: Uint8Array, encoding: string) =>
  call(path, { method: "POST", body: bytes, headers: { "content-type": "application/json", "content-encoding": encoding } }, models);

describe("compressed request bodies", () => {
  it("gzip and deflate bodies are answered like plain ones, stream and not", async () => {
    for (const format of ["gzip", "deflate"] as const) {
      const plain = await post("/v1/chat/completions", await compressed(format, body), format);
      expect(plain.res.status, format).toBe(200);
      expect((await plain.res.json<any>()).choices[0].message.content, format).toBe("Compressed fine.");
      const streamed = await post("/v1/chat/completions", await compressed(format, { ...body, stream: true }), format);
      expect(streamed.res.status, format).toBe(200);
      expect(text((await readSse(streamed.res)).frames), format).toBe("Compressed fine.");
    }
    const responses = await post("/v1/responses", await compressed("gzip", { model: "m", input: "hi", max_output_tokens: 32, grammar: grammar("Compressed fine.") }), "gzip");
    expect(responses.res.status).toBe(200);
    const output = (await responses.res.json<any>()).output.find((o: any) => o.type === "message");
    expect(output.content[0].text).toBe("Compressed fine.");
  });

  it("a zstd body is answered like a plain one", async () => {
    const { res } = await post("/v1/chat/completions", zstdRaw(new TextEncoder().encode(JSON.stringify(body))), "zstd");
    expect(res.status).toBe(200);
    expect((await res.json<any>()).choices[0].message.content).toBe("Compressed fine.");
    // A frame as a real compressor writes it (Node 22's zlib.zstdCompressSync; compressed blocks, content size declared)
    // of {"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4}.
    const real = Uint8Array.from(atob("KLUv/SBIBQIAggQPFaA5Y6jXCHBJUv920bRd1QJ5GKr6EA24N2Gia1hOboQ2cnyvhCspsVnhKt+IVM2Ce9E4u5ib8xthoTkLAA=="), (c) => c.charCodeAt(0));
    const fromNode = await post("/v1/chat/completions", real, "zstd");
    expect(fromNode.res.status).toBe(200);
    expect((await fromNode.res.json<any>()).usage.completion_tokens).toBeGreaterThan(0);
  });

  it("a 100 MB bomb is 413 request_too_large; an unknown coding is 415; bytes that are not the coding are 400", async () => {
    const bomb = await post("/v1/chat/completions", zstdBomb(), "zstd");
    expect(bomb.res.status).toBe(413);
    expect((await bomb.res.json<any>()).error.code).toBe("request_too_large");
    const br = await post("/v1/chat/completions", new TextEncoder().encode(JSON.stringify(body)), "br");
    expect(br.res.status).toBe(415);
    expect((await br.res.json<any>()).error).toMatchObject({ code: "unsupported_content_encoding", type: "invalid_request_error" });
    const lie = await post("/v1/messages", new TextEncoder().encode(JSON.stringify(body)), "gzip");
    expect(lie.res.status).toBe(400);
    expect((await lie.res.json<any>()).error.message).toContain("gzip");
  });

  it("a Content-Encoding of 120 layers is 415 at once, on every door, before any layer is decoded (issue 40, finding 3)", async () => {
    // The bytes need not be gzip at all: the header alone is refused.
    const many = Array.from({ length: 120 }, () => "gzip").join(", ");
    const bytes = new Uint8Array(3_800_000).fill(0x20);
    for (const path of ["/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"]) {
      const started = Date.now();
      const { res } = await post(path, bytes, many);
      expect(res.status, path).toBe(415);
      expect((await res.json<any>()).error, path).toMatchObject({ code: "unsupported_content_encoding", param: "Content-Encoding" });
      expect(Date.now() - started, path).toBeLessThan(1000);
    }
    const messages = await post("/v1/messages", bytes, many);
    expect(messages.res.status).toBe(415);
    expect(JSON.stringify(await messages.res.json())).toContain("at most 2");
  });
});

/** `bytes` as one zstd frame of raw blocks (what a compressor writes for incompressible input). */
function zstdRaw(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + 1 + 1 + 3 + bytes.length);
  out.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3]);
  const header = (bytes.length << 3) | 1; // last block, raw
  out.set([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff], 6);
  out.set(bytes, 9);
  return out;
}
