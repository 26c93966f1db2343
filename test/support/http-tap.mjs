// A transparent recorder between a client and a server: every request is forwarded unchanged and
// its answer streamed back as it comes, while the request body, the status and (for a refusal) the
// answer's body are kept. The coding-agent tests put it in front of Switchyard so that when a client
// gives up, the exact request Switchyard refused and what it said are in the failure report.
//
//   const tap = await startTap(proxy.url);    // clients use tap.url
//   tap.exchanges()   // [{ method, path, at, request, status, requestId, response, lost? }], oldest first (lost: the tap's own request failed)
//   tap.refused()     // those answered with status >= 400
import { Agent, createServer, request as httpRequest } from "node:http";
import zlib from "node:zlib";

// A fresh connection per forwarded request: a pooled socket that the server closes as idle just when
// it is reused fails with "socket hang up", which the client would see as a failure of the server's
// (agent-upstream.mjs saw it in front of llama-server on a loaded machine).
const fresh = new Agent({ keepAlive: false });

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
 * One request through the tap: `request` is its body, `response` the answer's (the first 64 KiB),
 * `requestId` the answer's x-request-id (which Switchyard also sends upstream).
 * @typedef {{ method: string | undefined, path: string | undefined, at: number, request: string, status: number, requestId?: string, response: string, lost?: boolean }} Exchange
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
    /** @type {Exchange} */
    const entry = { method: req.method, path: req.url, at: Date.now(), request: body.toString("utf8"), status: 0, response: "" };
    exchanges.push(entry);
    const target = new URL(req.url ?? "/", targetUrl);
    const headers = { ...req.headers, host: target.host };
    const up = httpRequest(target, { method: req.method, headers, agent: fresh }, (upRes) => {
      entry.status = upRes.statusCode ?? 0;
      const id = upRes.headers["x-request-id"];
      if (typeof id === "string") entry.requestId = id;
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
      // A client done with the answer (Codex at response.completed) may close before its end came
      // through: the upstream request is then destroyed (below) and never ends; what came is kept.
      upRes.on("close", () => {
        if (entry.response === "" && kept.length) entry.response = decode(Buffer.concat(kept), upRes.headers["content-encoding"]);
      });
      upRes.on("error", () => res.destroy());
    });
    up.on("error", (e) => {
      entry.status = 502;
      entry.response = `tap: ${e.message}`;
      // Not an answer from the target: the tap's own request failed (the client gave up first, or
      // the target went away), so a test judging the target's answers can leave it out.
      entry.lost = true;
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(entry.response);
    });
    res.on("close", () => up.destroy());
    up.end(body);
  });
  // A WebSocket upgrade (Codex's Responses socket) is forwarded as such and recorded with its status;
  // after the 101 the two sockets are piped, and `request` notes the size of each piece the client sent.
  /** @type {Set<import("node:stream").Duplex>} */
  const sockets = new Set();
  server.on("upgrade", (req, socket, head) => {
    const entry = { method: req.method, path: req.url, at: Date.now(), request: "", status: 0, response: "" };
    exchanges.push(entry);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    const target = new URL(req.url ?? "/", targetUrl);
    const up = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host }, agent: fresh });
    up.on("upgrade", (upRes, upSocket, upHead) => {
      entry.status = upRes.statusCode ?? 0;
      const lines = [`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}`, ...Object.entries(upRes.headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      socket.on("data", (b) => void (entry.request.length < KEEP && (entry.request += `${b.length} bytes\n`)));
      upSocket.pipe(socket).pipe(upSocket);
      upSocket.on("error", () => socket.destroy());
      socket.on("error", () => upSocket.destroy());
      socket.on("close", () => upSocket.destroy());
    });
    up.on("response", (upRes) => {
      // Refused: the answer goes back as it is, and is kept like any refusal.
      entry.status = upRes.statusCode ?? 0;
      /** @type {Buffer[]} */
      const kept = [];
      upRes.on("data", (b) => kept.push(b));
      upRes.on("end", () => {
        entry.response = decode(Buffer.concat(kept), upRes.headers["content-encoding"]);
        const type = upRes.headers["content-type"] ?? "text/plain";
        socket.end(`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(entry.response)}\r\nconnection: close\r\n\r\n${entry.response}`);
      });
    });
    up.on("error", (e) => {
      entry.status = 502;
      entry.response = `tap: ${e.message}`;
      socket.destroy();
    });
    up.end();
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
        for (const socket of sockets) socket.destroy();
        server.close(resolve);
      }),
  };
}
