// Each file of the worker project starts as it would in an isolate of its own, while all of them
// share one workerd (isolate: false in vitest.config.ts; starting one per file was half the
// project's time): the Worker's modules are evaluated again for the file (their per-isolate state,
// the admission line, the ledger, the health copy, caches, starts empty), and every Durable Object
// is torn down with its storage wiped (the health hub, key stores, the request log).
import { abortAllDurableObjects, reset } from "cloudflare:test";
import { vi } from "vitest";

vi.resetModules();
await abortAllDurableObjects();
await reset();
