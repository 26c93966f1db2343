// Web platform types that the Worker's source names as globals, as workerd and browsers declare them,
// but Node declares only in its modules: ReadableStreamReadResult (node:stream/web; named by
// src/stream/event-source.ts) and HeadersInit (undici, Node's fetch; src/errors/error-envelope.ts). The
// Node code that imports types from src/ (the tool-call engine in bench/toolcalls, the error envelope
// in test/support) sees them through this (tsconfig.node.json).
declare global {
  type ReadableStreamReadResult<T> = import("node:stream/web").ReadableStreamReadResult<T>;
  type HeadersInit = import("undici-types").HeadersInit;
}

export {};
