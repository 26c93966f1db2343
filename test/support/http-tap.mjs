// A transparent recorder between a client and a server: every request is forwarded unchanged and
// its answer streamed back as it comes, while the request body, the status and (for a refusal) the
// answer's body are kept. The coding-agent tests put it in front of Switchyard so that when a client
// gives up, the exact request Switchyard refused and what it said are in the failure report.
//
//   const tap = await startTap(proxy.url);    // clients use tap.url
//   tap.exchanges()   // [{ method, path, request, status, response }], oldest first
//   tap.refused()     // those answered with status >= 400
import { createServer, request as httpRequest } from "node:http";
import zlib from "node:zlib";

const KEEP = 64 * 1024;

/**
 * A kept answer as text, uncompressed when it can be (a cut-off compressed answer may not be).
 * @param {Buffer} bytes
 * @param {string | undefined} encoding its content-encoding
 */
function decode(bytes, encoding) {
  /** @type {Record<string, (bytes: Buffer) => Buffer>} */
  const unpackers = { gzip: zlib.gunzipSync, deflate: zlib.inflateSync, br: zlib.brotliDecompressSync, zstd: zlib.zstdDecompressSync };
  const unpack = encoding === undefined ? undefined : unpackers[encoding];
  try {
    return (unpack ? unpack(bytes) : bytes).toString("utf8");
  } catch {
    return `(${encoding}, ${bytes.length} bytes, not decodable)`;
  }
}

/**
 * One request through the tap: `request` is its body, `response` the answer's (the first 64 KiB).
 * @typedef {{ method: string | undefined, path: string | undefined, at: number, request: string, status: number, response: string }} Exchange
 */

/** @param {string} targetUrl */
export async function startTap(targetUrl) {
  /** @type {Exchange[]} */
  const exchanges = [];
  const server = createServer(async (req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    for await (const part of req) chunks.push(part);
    const body = Buffer.concat(chunks);
    const entry = { method: req.method, path: req.url, at: Date.now(), request: body.toString("utf8"), status: 0, response: "" };
    exchanges.push(entry);
    const target = new URL(req.url ?? "/", targetUrl);
    const headers = { ...req.headers, host: target.host };
    const up = httpRequest(target, { method: req.method, headers }, (upRes) => {
      entry.status = upRes.statusCode ?? 0;
      res.writeHead(entry.status, upRes.headers);
      /** @type {Buffer[]} */
      const kept = [];
      let size = 0;
      upRes.on("data", (b) => {
        if (size < KEEP) kept.push(b);
        size += b.length;
        res.write(b);
      });
      upRes.on("end", () => {
        entry.response = decode(Buffer.concat(kept), upRes.headers["content-encoding"]);
        res.end();
      });
      upRes.on("error", () => res.destroy());
    });
    up.on("error", (e) => {
      entry.status = 502;
      entry.response = `tap: ${e.message}`;
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(entry.response);
    });
    res.on("close", () => up.destroy());
    up.end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges: () => exchanges.slice(),
    refused: () => exchanges.filter((e) => e.status >= 400),
    reset: () => void (exchanges.length = 0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
