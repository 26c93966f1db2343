// The runtime's floor: a Worker that forwards the request to its upstream (same path) and returns the
// upstream's body as it arrives, adding nothing of its own. `/llama/…` goes to LLAMA (the real
// llama-server), everything else to UPSTREAM (the fast stand-in). Under `/js/…` the body is instead
// read chunk by chunk in JavaScript and written on through a TransformStream: the floor for any Worker
// that looks at a streamed body (the runtime's cost of handing each chunk to JS and back).
export default {
  async fetch(request, env) {
    let { pathname } = new URL(request.url);
    const js = pathname.startsWith("/js/");
    if (js) pathname = pathname.slice(3);
    const target = pathname.startsWith("/llama/") ? env.LLAMA + pathname.slice(6) : env.UPSTREAM + pathname;
    const up = await fetch(target, { method: request.method, headers: { "content-type": "application/json" }, body: request.body });
    const headers = { "content-type": up.headers.get("content-type") ?? "application/json" };
    if (!js) return new Response(up.body, { status: up.status, headers });
    const { readable, writable } = new TransformStream();
    const relay = async () => {
      const writer = writable.getWriter();
      const reader = up.body.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) await writer.write(r.value);
      await writer.close();
    };
    relay().catch(() => {});
    return new Response(readable, { status: up.status, headers });
  },
};
