// A recorder in front of an HTTP server that passes every byte through unchanged and decodes the
// WebSocket messages on upgraded connections (frames unmasked and joined, permessage-deflate
// inflated), for tests that assert what a client said over a socket (the HTTP tap records a
// socket's bytes only as counts).
import { createServer, request as httpRequest } from "node:http";
import zlib from "node:zlib";
import { readFrame } from "./ws-frame.mjs";

/** @typedef {{ socket: number, from: "client" | "server", seq: number, text: string }} SocketMessage */

/**
 * Reads one direction of a WebSocket connection (a copy of its bytes) into whole messages: frames
 * unmasked and joined, and, when permessage-deflate was agreed, inflated with one context per
 * direction (which also reads a sender that resets its context). Control frames are skipped.
 * @param {boolean} deflate
 * @param {(text: string, seq: number) => void} onMessage
 * @param {() => number} nextSeq the message's place among both directions' messages, taken when its last frame arrives
 */
function socketReader(deflate, onMessage, nextSeq) {
  let buffer = Buffer.alloc(0);
  /** @type {Buffer[]} */
  let parts = [];
  let compressed = false;
  /** @type {zlib.InflateRaw | null} */
  let inflater = null;
  let queue = Promise.resolve();
  /** @param {Buffer} data */
  const inflate = (data) =>
    new Promise((resolve) => {
      const z = (inflater ??= zlib.createInflateRaw());
      /** @type {Buffer[]} */
      const out = [];
      const collect = (/** @type {Buffer} */ c) => out.push(c);
      z.on("data", collect);
      z.write(Buffer.concat([data, Buffer.from([0, 0, 0xff, 0xff])]));
      z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        z.off("data", collect);
        resolve(Buffer.concat(out));
      });
    });
  return {
    /** @param {Buffer} chunk */
    feed(chunk) {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const frame = readFrame(buffer);
        if (!frame) return;
        const { opcode, payload, fin, rsv1 } = frame;
        buffer = buffer.subarray(frame.size);
        if (opcode >= 8) continue;
        if (opcode !== 0) [parts, compressed] = [[], rsv1];
        parts.push(payload);
        if (!fin) continue;
        const data = Buffer.concat(parts);
        const inflated = compressed && deflate;
        const seq = nextSeq();
        queue = queue.then(async () => onMessage((inflated ? await inflate(data) : data).toString("utf8"), seq));
      }
    },
    done: () => queue,
  };
}

/**
 * A pass-through in front of `targetUrl` that keeps every WebSocket message both ways (HTTP requests
 * are forwarded unrecorded: the tap behind it records those).
 * @param {string} targetUrl
 */
export async function startSocketRecorder(targetUrl) {
  /** @type {SocketMessage[]} */
  const messages = [];
  /** @type {Array<ReturnType<typeof socketReader>>} */
  const readers = [];
  /** @type {Set<import("node:stream").Duplex>} */
  const sockets = new Set();
  let seq = 0;
  let connections = 0;
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/", targetUrl);
    const up = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on("error", () => res.destroy());
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  server.on("upgrade", (req, socket, head) => {
    sockets.add(socket);
    const target = new URL(req.url ?? "/", targetUrl);
    const up = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host } });
    up.on("upgrade", (upRes, upSocket, upHead) => {
      sockets.add(upSocket);
      const socketNo = connections++;
      const deflate = /permessage-deflate/.test(String(upRes.headers["sec-websocket-extensions"] ?? ""));
      const keep = (/** @type {"client" | "server"} */ from) => socketReader(deflate, (text, at) => messages.push({ socket: socketNo, from, seq: at, text }), () => seq++);
      const [fromClient, fromServer] = [keep("client"), keep("server")];
      readers.push(fromClient, fromServer);
      const lines = [`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}`, ...Object.entries(upRes.headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      for (const [bytes, reader, to] of /** @type {const} */ ([[upHead, fromServer, socket], [head, fromClient, upSocket]])) {
        if (!bytes.length) continue;
        reader.feed(bytes);
        to.write(bytes);
      }
      socket.on("data", (b) => {
        fromClient.feed(b);
        upSocket.write(b);
      });
      upSocket.on("data", (b) => {
        fromServer.feed(b);
        socket.write(b);
      });
      upSocket.on("close", () => socket.destroy());
      socket.on("close", () => upSocket.destroy());
      upSocket.on("error", () => socket.destroy());
      socket.on("error", () => upSocket.destroy());
    });
    // A refused upgrade: its status goes back, and the client falls back to HTTP (recorded by the tap).
    up.on("response", (upRes) => {
      upRes.resume();
      socket.end(`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    });
    up.on("error", () => socket.destroy());
    up.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    /** Every message so far, in the order their last frames arrived. */
    async messages() {
      await Promise.all(readers.map((r) => r.done()));
      return messages.slice().sort((a, b) => a.seq - b.seq);
    },
    /** The messages decoded so far (one may still be inflating), for a failure's report. */
    decoded: () => messages.slice().sort((a, b) => a.seq - b.seq),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
        server.close(() => resolve(undefined));
      }),
  };
}
