import { createApp } from "./app.ts";
export { SessionHub } from "./upstreams/browser/session-hub.ts";
export { KeyStore } from "./auth/key-store.ts";
export { KeyGate } from "./auth/key-gate.ts";
export { AuthGuard } from "./auth/auth-guard.ts";
export { HealthHub } from "./health/health-hub.ts";
export { ResponseStore } from "./api/responses/response-store.ts";

export default createApp();
