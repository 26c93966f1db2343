import { createApp } from "./app.ts";
export { SessionHub } from "./upstreams/browser/session-hub.ts";
export { KeyStore } from "./durable/key-store.ts";
export { KeyGate } from "./durable/key-gate.ts";
export { AuthGuard } from "./durable/auth-guard.ts";
export { HealthHub } from "./health/health-hub.ts";
export { ResponseStore } from "./durable/response-store.ts";

export default createApp();
