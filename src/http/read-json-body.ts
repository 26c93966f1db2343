import { ProxyError } from "../errors/proxy-error.ts";

// Decoding a whole body at once keeps no state between calls: one decoder serves every request.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` (whether or not
 * the client declared a Content-Length), and with 400 `invalid_json` when it does not parse.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const tooLarge = () =>
    new ProxyError({
      status: 413,
      code: "request_too_large",
      message: `The request body is larger than the ${maxBytes}-byte limit. Send a smaller request, or raise limits.maxBodyBytes in SWITCHYARD_CONFIG.`,
    });
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge();
  if (!request.body) throw invalidJson("The request has no body; send a JSON object.");

  // A declared length is enforced by the HTTP runtime (the body cannot run past it): read it in one
  // go, and check the size read anyway (a Request built in-process carries whatever header it was given).
  const bytes = declared >= 0 ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request.body, maxBytes, tooLarge);
  if (bytes.byteLength > maxBytes) throw tooLarge();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidJson("The request body is not valid UTF-8.");
  }
  if (text.trim() === "") throw invalidJson("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidJson(`The request body is not valid JSON: ${(e as Error).message}.`);
  }
}

/** A body of unknown length (chunked), refused as soon as it passes `maxBytes`. */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: () => ProxyError): Promise<Uint8Array> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const p of parts) {
    bytes.set(p, offset);
    offset += p.byteLength;
  }
  return bytes;
}

function invalidJson(message: string): ProxyError {
  return new ProxyError({ status: 400, code: "invalid_json", message });
}
