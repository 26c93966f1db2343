// The runtime's floor: a Worker that forwards the request to its upstream (same path) and returns the
// upstream's body as it arrives, adding nothing of its own. `/llama/…` goes to LLAMA (the real
// llama-server), everything else to UPSTREAM (the fast stand-in). Two diagnostic modes, each the floor
// for a kind of work any proxy in JavaScript does:
// - `/js/…`: the body is read chunk by chunk in JavaScript and written on through a TransformStream
//   (the runtime's cost of handing each chunk to JS and back);
// - `/gather/…`: a non-stream request is parsed, asked of the upstream as a stream, and the stream's
//   text gathered into one chat completion (parse the request, re-serialise it, read an SSE body in JS,
//   write a new JSON body: what a proxy that always streams from its upstream must do at the least);
//   a stream request is relayed as under `/js/`.
const decoder = new TextDecoder();

export default {
  /**
   * @param {Request} request
   * @param {{ UPSTREAM: string, LLAMA: string }} env its [vars] (wrangler.toml)
   */
  async fetch(request, env) {
    let { pathname } = new URL(request.url);
    const mode = pathname.startsWith("/js/") ? "js" : pathname.startsWith("/gather/") ? "gather" : "native";
    if (mode !== "native") pathname = pathname.slice(mode.length + 1);
    const target = pathname.startsWith("/llama/") ? env.LLAMA + pathname.slice(6) : env.UPSTREAM + pathname;
    if (mode === "gather") {
      const body = JSON.parse(await request.text());
      if (!body.stream) return gather(target, body);
      return relay(await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
    }
    const up = await fetch(target, { method: request.method, headers: { "content-type": "application/json" }, body: request.body });
    if (mode === "js") return relay(up);
    return new Response(up.body, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "application/json" } });
  },
};

/**
 * @param {Response} up
 * @returns {Response}
 */
function relay(up) {
  const { readable, writable } = new TransformStream();
  const pump = async () => {
    const writer = writable.getWriter();
    const reader = /** @type {ReadableStream<Uint8Array>} */ (up.body).getReader(); // the upstreams here always send a body
    for (let r = await reader.read(); !r.done; r = await reader.read()) await writer.write(r.value);
    await writer.close();
  };
  pump().catch(() => {});
  return new Response(readable, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "application/json" } });
}

/**
 * @param {string} target
 * @param {Record<string, unknown>} body
 */
async function gather(target, body) {
  const up = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, stream: true }) });
  const reader = /** @type {ReadableStream<Uint8Array>} */ (up.body).getReader();
  let text = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
  let content = "";
  let last = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    last = JSON.parse(line.slice(6));
    content += last.choices?.[0]?.delta?.content ?? "";
  }
  const answer = { id: last?.id, object: "chat.completion", created: last?.created, model: last?.model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: last?.usage };
  return new Response(JSON.stringify(answer), { status: up.status, headers: { "content-type": "application/json" } });
}

