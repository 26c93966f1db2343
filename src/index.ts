// The Worker's entry module: the app as its fetch handler, and the Durable Object classes
// wrangler.toml binds (a Worker's Durable Objects must be exported from its entry module).
import { createApp } from "./app.ts";
export { SessionHub } from "./upstreams/browser/session-hub.ts";
export { KeyStore } from "./auth/key-store.ts";
export { KeyGate } from "./auth/key-gate.ts";
export { AuthGuard } from "./auth/auth-guard.ts";
export { HealthHub } from "./health/health-hub.ts";
export { ResponseStore } from "./api/responses/index.ts";
export { RequestLog } from "./observability/request-log.ts";
export { AdmissionHub } from "./routing/admission/admission-hub.ts";
import { BatchStore } from "./batch/batch-store.ts";
export { BatchStore };

const app = createApp();
// Batch lines run through this same app, in-process (src/batch/run-line.ts).
BatchStore.dispatch = async (request, env, ctx) => app.fetch(request, env, ctx);

export default app;
