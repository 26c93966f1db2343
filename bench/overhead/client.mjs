// A lean HTTP client for the benchmark (node:http with keep-alive), so the client's own cost is small
// and the same for every path. Times are performance.now() in this process.
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

const TOKEN = /"(?:content|reasoning_content)":"[^"]|"tool_calls":\[\{/;

export const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048 });

/**
 * POSTs `body` (JSON) and reads the answer. Returns { status, t0, first (first body bytes), token
 * (first bytes of the first SSE frame that carries a token: content, reasoning or a tool call), end,
 * frames: [arrival time, text] per SSE frame when `frames` is set, done: saw [DONE] or a JSON body, text }.
 * `token` is 0 when no frame carried one (and on a failed request).
 * @param {string} url
 * @param {{ stream?: boolean } & Record<string, unknown>} body
 * @param {{ headers?: Record<string, string>, frames?: boolean, timeoutMs?: number }} [options]
 * @returns {Promise<{ status: number, t0: number, first: number, token: number, end: number, frames: Array<[number, string]>, done: boolean, text: string }>}
 */
export function post(url, body, { headers = {}, frames = false, timeoutMs = 60_000 } = {}) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const t0 = performance.now();
    let first = 0;
    let token = 0;
    let text = "";
    /** @type {Array<[number, string]>} */
    const seen = [];
    let buf = "";
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": payload.length, ...headers } }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (s) => {
        const now = performance.now();
        if (!first) first = now;
        text += s;
        if (!token && TOKEN.test(text)) token = now;
        if (frames) {
          buf += s;
          let at;
          while ((at = buf.indexOf("\n\n")) >= 0) {
            seen.push([now, buf.slice(0, at)]);
            buf = buf.slice(at + 2);
          }
        }
      });
      res.on("end", () => {
        clearTimeout(timer);
        const done = body.stream ? text.includes("data: [DONE]") && !/"error"\s*:/.test(text.slice(-2000)) : text.trimStart().startsWith("{") && !text.includes('"error"');
        resolve({ status: res.statusCode ?? 0, t0, first, token, end: performance.now(), frames: seen, done, text: done ? "" : text.slice(0, 500) });
      });
      res.on("error", (e) => resolve({ status: 0, t0, first, token, end: performance.now(), frames: seen, done: false, text: String(e) }));
    });
    const timer = setTimeout(() => req.destroy(new Error("timeout")), timeoutMs);
    req.on("error", (e) => {
      clearTimeout(timer);
      resolve({ status: 0, t0, first, token, end: performance.now(), frames: seen, done: false, text: String(e) });
    });
    req.end(payload);
  });
}

/**
 * The `p`th percentile of `xs` (NaN for none).
 * @param {ArrayLike<number>} xs
 * @param {number} p
 * @returns {number}
 */
export const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
