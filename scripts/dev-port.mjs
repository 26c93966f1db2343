// The launcher picks the port itself and passes it to `wrangler dev`, so the links it prints name the
// server that really answers: wrangler moves to the next free port when its default 8787 is taken,
// and the launcher would otherwise still print 8787 (someone else's server).
import { connect, createServer } from "node:net";

/**
 * Whether something already holds `port`: it cannot be bound on `bindHost`, or a server answers on `linkHost`.
 * @param {number} port
 * @param {string} bindHost an address, or "*" for every one
 * @param {string} [linkHost]
 * @returns {Promise<boolean>}
 */
export async function portInUse(port, bindHost, linkHost = bindHost) {
  const bindable = await new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host: bindHost === "*" ? "0.0.0.0" : bindHost, exclusive: true }, () => server.close(() => resolve(true)));
  });
  if (!bindable) return true;
  return new Promise((resolve) => {
    const socket = connect({ port, host: linkHost });
    const done = (/** @type {boolean} */ answered) => {
      socket.destroy();
      resolve(answered);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.setTimeout(500, () => done(false));
  });
}

/**
 * The first free port of `from`…`from + count - 1` (wrangler's own search: 8787 and the next ten), else any free one.
 * @param {number} from
 * @param {number} count
 * @param {string} bindHost
 * @param {string} [linkHost]
 * @returns {Promise<number>}
 */
export async function firstFreePort(from, count, bindHost, linkHost) {
  for (let port = from; port < from + count; port++) if (!(await portInUse(port, bindHost, linkHost))) return port;
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ port: 0, host: bindHost === "*" ? "0.0.0.0" : bindHost }, () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}
