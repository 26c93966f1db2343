// Serves one GGUF file over HTTP for `npm start` (LLAMA_MODEL), so browser tabs can run the very file
// the local llama-server runs: CORS and Cross-Origin-Resource-Policy for any page (a cross-origin
// isolated page needs one of them), HEAD and byte ranges, and nothing but that one path.
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { basename } from "node:path";

const HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "range",
  "access-control-expose-headers": "content-length, content-range, accept-ranges",
  "cross-origin-resource-policy": "cross-origin",
  "accept-ranges": "bytes",
  "cache-control": "no-cache",
};

/**
 * @param {string} file an absolute path to a .gguf file
 * @param {string} host the address to listen on (the one the printed links use)
 * @param {number} [port] 0: any free port
 * @returns {Promise<{ url: string, close(): void }>} the file's URL
 */
export async function serveGguf(file, host, port = 0) {
  const name = basename(file);
  const path = `/${encodeURIComponent(name)}`;
  const server = createServer((req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== path) {
      res.writeHead(404, HEADERS).end();
      return;
    }
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...HEADERS, "access-control-allow-methods": "GET, HEAD" }).end();
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...HEADERS, allow: "GET, HEAD, OPTIONS" }).end();
      return;
    }
    const size = statSync(file).size;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    let start = 0;
    let end = size - 1;
    if (range && (range[1] || range[2])) {
      start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
      end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start > end || start >= size) {
        res.writeHead(416, { ...HEADERS, "content-range": `bytes */${size}` }).end();
        return;
      }
    }
    const partial = Boolean(range && (range[1] || range[2]));
    res.writeHead(partial ? 206 : 200, {
      ...HEADERS,
      "content-type": "application/octet-stream",
      "content-length": String(end - start + 1),
      ...(partial ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(file, { start, end }).pipe(res);
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(port, host, () => resolve(undefined)));
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return { url: `http://${shown}:${bound}${path}`, close: () => server.close() };
}
