// What a promise the test expects to fail rejected with (the attempt loop's errors are ProxyErrors).
import type { ProxyError } from "../../../../src/errors/proxy-error.ts";

export async function rejection(p: Promise<unknown>): Promise<ProxyError> {
  try {
    await p;
  } catch (e) {
    return e as ProxyError;
  }
  throw new Error("resolved");
}
