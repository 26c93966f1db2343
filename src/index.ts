import { Hono } from "hono";
export { SessionHub } from "./durable/session-hub";

const app = new Hono<{ Bindings: Env }>();
app.get("/health", (c) => c.json({ status: "ok" }));
export default app;
