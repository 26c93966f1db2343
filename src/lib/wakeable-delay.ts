// A delay that can be ended early: a batch waiting out its window (the request log's, the health
// outbox's) in some request's ctx.waitUntil is sent sooner when it is full or asked for, and that
// request's waitUntil ends with it instead of lasting the window.

/** `ended` settles `ms` from now, or when `wake` is called (from any request: it settles in its own). */
export function wakeableDelay(ms: number): { ended: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const ended = new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
    wake = resolve;
  });
  return { ended, wake };
}
