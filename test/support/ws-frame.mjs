// One WebSocket frame read from the front of a buffer (RFC 6455 §5.2), for the tests' and benches'
// hand-made socket readers: its flags, opcode and payload (unmasked), and how many bytes it took.

/**
 * The frame at the start of `buffer`, or null while it has not all arrived.
 * @param {Buffer} buffer
 * @returns {{ fin: boolean, rsv1: boolean, opcode: number, payload: Buffer, size: number } | null}
 */
export function readFrame(buffer) {
  if (buffer.length < 2) return null;
  let length = buffer[1] & 0x7f;
  let at = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    length = Number(buffer.readBigUInt64BE(2));
    at = 10;
  }
  const masked = (buffer[1] & 0x80) !== 0;
  const mask = masked ? buffer.subarray(at, at + 4) : null;
  if (masked) at += 4;
  if (buffer.length < at + length) return null;
  const payload = Buffer.from(buffer.subarray(at, at + length));
  if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
  return { fin: (buffer[0] & 0x80) !== 0, rsv1: (buffer[0] & 0x40) !== 0, opcode: buffer[0] & 0x0f, payload, size: at + length };
}
