// A session with the Worker's isolate through workerd's inspector (Chrome DevTools Protocol): the
// profilers of bench/overhead/profile-worker.mjs and bench/trace-files.mjs send their calls by it.

/**
 * Opens a session with the Worker's isolate (`core:user…`) on the inspector at `port`; `call`
 * answers a method's result, or `{ error }` when the runtime refuses it.
 * @param {number} port
 * @returns {Promise<{ call(method: string, params?: object): Promise<any>, close(): void }>}
 */
export async function inspectorSession(port) {
  const targets = /** @type {Array<{ title?: string, webSocketDebuggerUrl: string }>} */ (await (await fetch(`http://127.0.0.1:${port}/json`)).json());
  const target = targets.find((t) => /core:user/.test(t.title ?? ""));
  if (!target) throw new Error(`no Worker isolate among the inspector's targets: ${targets.map((t) => t.title).join(", ")}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((res, rej) => (ws.addEventListener("open", res), ws.addEventListener("error", rej)));
  let id = 0;
  /** @type {Map<number, (result: any) => void>} */
  const pending = new Map();
  ws.addEventListener("message", (m) => {
    const d = JSON.parse(m.data);
    pending.get(d.id)?.(d.result ?? { error: d.error });
    pending.delete(d.id);
  });
  return {
    call: (method, params = {}) => new Promise((res) => (pending.set(++id, res), ws.send(JSON.stringify({ id, method, params })))),
    close: () => ws.close(),
  };
}
