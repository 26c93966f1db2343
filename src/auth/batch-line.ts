// A batch line run through the app in-process (src/batch/batch-runner.ts): the mark its request
// carries in the env the app is called with, never in the request itself, so no client can forge it.
// The middleware takes the key that created the batch from it instead of a credential; routing puts
// the request in the batch class (below every interactive request); the meter marks its usage rows.

/** The env property the batch runner sets (an object: a `--var` or a secret can only be a string). */
export const BATCH_LINE_ENV = "__SWITCHYARD_BATCH_LINE";

export class BatchLineMark {
  constructor(
    /** The key that created the batch; null in open mode. */
    readonly keyId: string | null,
    readonly batchId: string,
    readonly customId: string,
  ) {}
}

/** The mark of a batch line's request, or undefined for every request a client sent. */
export function batchLineOf(env: object): BatchLineMark | undefined {
  const v = (env as Record<string, unknown>)[BATCH_LINE_ENV];
  return v instanceof BatchLineMark ? v : undefined;
}
