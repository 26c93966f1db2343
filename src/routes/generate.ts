// The one handler of every generating API (chat completions, completions, Responses, compact,
// Messages): the body read and checked by the API's door (src/api/<surface>/index.ts), its chat run
// through the pipeline (src/routing/pipeline.ts runChat), and the answer encoded by the door, as SSE
// or as one JSON body (src/responders/).
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import type { GeneratingApi } from "../api/door.ts";
import { loadConfig } from "../config/load-config.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { sseResponse } from "../responders/sse-response.ts";
import { runChat } from "../routing/pipeline.ts";
import { readRequestBody, requestScope } from "./request-scope.ts";

/** The route of a generating API: validate → pipeline → encode; a failure in the API's own shape when it has one. */
export function generate<R>(api: GeneratingApi<R>): (c: Context<AppEnv>) => Promise<Response> {
  const refuse = api.refuse;
  if (!refuse) return (c) => answer(api, c);
  return async (c) => {
    try {
      return await answer(api, c);
    } catch (e) {
      return refuse(toProxyError(e), c);
    }
  };
}

async function answer<R>(api: GeneratingApi<R>, c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = api.validate(await readRequestBody(c, config.limits.maxBodyBytes));
  const opening = api.open(request, c);
  const opened = opening instanceof Promise ? await opening : opening;
  const run = runChat(requestScope(c), config, opened.chat, opened.options);
  const out = opened.encode(run);
  return "encoder" in out ? sseResponse({ ...run.common, ...out }) : jsonResponse({ ...run.common, ...out });
}
