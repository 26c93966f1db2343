// Raw TCP clients for the hostile-key bench: a WebSocket whose upgrade and frames are done by hand
// (so it can stop reading its socket and leave the bytes in the kernel, as a stalled client does),
// and an HTTP request that is written and then never read.
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { readFrame } from "../../test/support/ws-frame.mjs";

/**
 * Opens `GET path` with an upgrade on `port` (loopback). Resolves with the status; on 101, `send`
 * writes a masked text frame, `messages` holds the text messages read so far (while reading),
 * `closed` the server's close code (or null), `stopReading()` pauses the socket for good.
 * @param {number} port @param {string} path @param {Record<string, string>} headers
 */
export function openWebSocket(port, path, headers) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    /** @type {string[]} */ const messages = [];
    /** @type {Array<() => void>} */ const waiters = [];
    const state = { status: 0, closed: /** @type {number | null} */ (null), messages, send, stopReading, next, destroy: () => socket.destroy() };
    socket.on("error", (e) => (upgraded ? ((state.closed ??= 1006), wake()) : reject(e)));
    socket.on("close", () => ((state.closed ??= 1006), wake()));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`,
    );
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        state.status = Number(/^HTTP\/1\.1 (\d+)/.exec(buffer.subarray(0, end).toString("latin1"))?.[1] ?? 0);
        buffer = buffer.subarray(end + 4);
        upgraded = true;
        if (state.status !== 101) socket.destroy();
        resolve(state);
      }
      readFrames();
    });

    function readFrames() {
      for (;;) {
        const frame = readFrame(buffer);
        if (!frame) return;
        const { opcode, payload } = frame;
        buffer = buffer.subarray(frame.size);
        if (opcode === 1) messages.push(payload.toString("utf8"));
        if (opcode === 8) state.closed = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        wake();
      }
    }
    function wake() {
      waiters.splice(0).forEach((w) => w());
    }
    /** The next message whose JSON `type` is one of `types`, or null when closed or after `ms`. */
    async function next(/** @type {string[]} */ types, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        while (messages.length) {
          const m = messages.shift();
          const type = JSON.parse(/** @type {string} */ (m)).type;
          if (types.includes(type)) return JSON.parse(/** @type {string} */ (m));
        }
        if (state.closed !== null || Date.now() > deadline) return null;
        await new Promise((r) => {
          waiters.push(() => r(undefined));
          setTimeout(r, 100);
        });
      }
    }
    function send(/** @type {string} */ text) {
      const payload = Buffer.from(text, "utf8");
      const mask = randomBytes(4);
      const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : payload.length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
      if (payload.length >= 126 && payload.length < 65536) {
        head[0] = 0x81;
        head[1] = 0x80 | 126;
        head.writeUInt16BE(payload.length, 2);
      } else if (payload.length >= 65536) {
        head[0] = 0x81;
        head[1] = 0x80 | 127;
        head.writeBigUInt64BE(BigInt(payload.length), 2);
      }
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      socket.write(Buffer.concat([head, mask, payload]));
    }
    function stopReading() {
      socket.pause();
    }
  });
}

/**
 * Writes one HTTP request on a raw connection and never reads the answer (the kernel's buffers fill,
 * then the sender must wait). Returns a function that ends the connection.
 * @param {number} port @param {string} path @param {Record<string, string>} headers @param {string} body
 */
export function postNeverRead(port, path, headers, body) {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  const bytes = Buffer.from(body, "utf8");
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n` +
      `${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`,
  );
  socket.write(bytes);
  socket.pause();
  return () => socket.destroy();
}
