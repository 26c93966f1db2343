// Reads a request's JSON body: bounded in size (decoded), decompressed when the client compressed it.
import { ProxyError } from "../errors/proxy-error.ts";
import { decodeBody, parseContentEncoding, refusedEncoding } from "./decode-body.ts";
import { readCapped } from "./read-capped.ts";

// Decoding a whole body at once keeps no state between calls: one decoder serves every request.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` (whether or not
 * the client declared a Content-Length), and with 400 `invalid_json` when it does not parse. A body
 * sent with `Content-Encoding` gzip, deflate or zstd is decoded first, and the limit counts the
 * decoded bytes; any other coding, or more than two codings, is refused with 415 before any decoding.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  return parseJsonText(await readBodyText(request, maxBytes));
}

/**
 * A request body's text, read and decoded as readJsonBody reads it (413, 415, and 400 `invalid_json`
 * when it is missing or not UTF-8), for a caller that keeps the text as sent when it does not parse.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new ProxyError({
      status: 413,
      code: "request_too_large",
      message: `The request body is larger than the ${maxBytes}-byte limit. Send a smaller request, or raise limits.maxBodyBytes in SWITCHYARD_CONFIG.`,
    });
  const encoding = parseContentEncoding(request.headers.get("content-encoding"));
  if (!encoding.ok) throw refusedEncoding(encoding);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  // A compressed body is smaller than its decoded form, so its own size is held to the limit too.
  if (declared > maxBytes) throw tooLarge();
  if (!request.body) throw invalidJson("The request has no body; send a JSON object.");

  // A declared length is enforced by the HTTP runtime (the body cannot run past it): read it in one
  // go, and check the size read anyway (a Request built in-process carries whatever header it was given).
  let bytes = declared >= 0 ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request.body, maxBytes, tooLarge);
  if (bytes.byteLength > maxBytes) throw tooLarge();
  if (encoding.codings.length > 0) bytes = await decodeBody(bytes, encoding.codings, maxBytes, tooLarge);
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalidJson("The request body is not valid UTF-8.");
  }
}

/** A request body's JSON (400 `invalid_json` when it is empty or does not parse). */
export function parseJsonText(text: string): unknown {
  if (text.trim() === "") throw invalidJson("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidJson(`The request body is not valid JSON: ${(e as Error).message}.`);
  }
}

function invalidJson(message: string): ProxyError {
  return new ProxyError({ status: 400, code: "invalid_json", message });
}
