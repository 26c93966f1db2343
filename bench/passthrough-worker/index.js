// The runtime's floor: a Worker that forwards the request to its upstream (same path) and returns the
// upstream's body as it arrives, adding nothing of its own. `/llama/…` goes to LLAMA (the real
// llama-server), everything else to UPSTREAM (the fast stand-in).
export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    const target = pathname.startsWith("/llama/") ? env.LLAMA + pathname.slice(6) : env.UPSTREAM + pathname;
    const up = await fetch(target, { method: request.method, headers: { "content-type": "application/json" }, body: request.body });
    return new Response(up.body, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "application/json" } });
  },
};
