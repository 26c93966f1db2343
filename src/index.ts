import { createApp } from "./app.ts";
export { SessionHub } from "./durable/session-hub.ts";

export default createApp();
