// How much the request log keeps (pure: read by the RequestLog Durable Object and the admin's status).

/** How much is kept: the newest `maxRecords` no older than `maxAgeMs`; captures only on the newest `captureMaxRecords`. */
export interface Retention {
  maxRecords: number;
  maxAgeMs: number;
  captureMaxRecords: number;
}

/**
 * The bound of the pool kept apart for requests refused before a key was known: a tenth of
 * `maxRecords`, from 10 to 1,000. Those requests are counted in /metrics whatever their number; the
 * pool keeps the latest few to show what they were, and never takes a row of the log's own.
 */
export const unauthenticatedMax = (maxRecords: number): number => Math.min(1000, Math.max(10, Math.floor(maxRecords / 10)));
