// Every request's id, first of all: Switchyard's own, so a client cannot name another request's log
// record; the id a client sent (OpenAI's clients: x-client-request-id) is kept beside it and echoed.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { randomId } from "../lib/ids.ts";

/** The id a client sent for its request (`x-client-request-id`, else `x-request-id`), when it is 1–128 of `A-Za-z0-9._:-`. */
function clientRequestId(headers: Headers): string | undefined {
  const sent = headers.get("x-client-request-id") ?? headers.get("x-request-id");
  return sent && /^[A-Za-z0-9._:-]{1,128}$/.test(sent) ? sent : undefined;
}

/** Sets `requestId` (and `clientRequestId`) on the context and answers both in the response's headers. */
export function requestIds(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = randomId("req_", 20);
    c.set("requestId", id);
    const client = clientRequestId(c.req.raw.headers);
    if (client) c.set("clientRequestId", client);
    await next();
    c.res.headers.set("x-request-id", id);
    if (client) c.res.headers.set("x-client-request-id", client);
  };
}
