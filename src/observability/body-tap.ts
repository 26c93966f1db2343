// A response body passed on to the client unchanged while its beginning, its end and the moment its
// first data left are noted, for the request log and traces; the client never waits on it.

/** What passed through a tapped body. */
export interface TappedBody {
  /** When the first chunk with data (not only SSE comments or whitespace heartbeats) passed. */
  firstDataAt: number | undefined;
  endedAt: number;
  /** closed: the body ended; cancelled: the client left (or the body failed) before its end. */
  how: "closed" | "cancelled";
  bytes: number;
  /** The first chunks (up to headBytes), the last ones (up to tailBytes), and all of them while keepBytes allowed. */
  head: Uint8Array[];
  tail: Uint8Array[];
  /** Every chunk, when asked (capture), until keepBytes was passed; `kept` is then false. */
  all: Uint8Array[] | undefined;
  kept: boolean;
}

export interface TapOptions {
  headBytes: number;
  tailBytes: number;
  /** Keep every chunk up to this many bytes (0: none). */
  keepBytes: number;
  /** Called once with the first chunk that carries data. */
  onFirstData?(chunk: Uint8Array): void;
}

const COLON = 0x3a;
const LF = 0x0a;
const SPACE = 0x20;

/**
 * Whether an SSE or JSON chunk carries anything but heartbeats: SSE comment lines (`: keep-alive`)
 * and the whitespace a committed JSON body begins with.
 */
export function carriesData(chunk: Uint8Array): boolean {
  let lineStart = true;
  let inComment = false;
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === LF) {
      lineStart = true;
      inComment = false;
      continue;
    }
    if (inComment) continue;
    if (lineStart && b === COLON) {
      inComment = true;
      continue;
    }
    if (b === SPACE || b === 0x0d || b === 0x09) {
      lineStart = false;
      continue;
    }
    return true;
  }
  return false;
}

/**
 * Passes `body` through unchanged (a client that leaves cancels `body` as before) and resolves `done`
 * once it ended, with what was noted. Chunks are kept by reference: the responders never write a
 * chunk again once it was taken (src/responders/byte-queue.ts). A pull source rather than a
 * TransformStream: one read and one enqueue per chunk, the least a pass-through can do.
 */
export function tapBody(body: ReadableStream<Uint8Array>, opts: TapOptions): { readable: ReadableStream<Uint8Array>; done: Promise<TappedBody> } {
  const seen: TappedBody = { firstDataAt: undefined, endedAt: 0, how: "closed", bytes: 0, head: [], tail: [], all: opts.keepBytes > 0 ? [] : undefined, kept: true };
  let headBytes = 0;
  let tailBytes = 0;
  let tailStart = 0;
  let settle!: (s: TappedBody) => void;
  const done = new Promise<TappedBody>((resolve) => (settle = resolve));
  const end = (how: TappedBody["how"]) => {
    if (seen.endedAt) return;
    seen.how = how;
    seen.endedAt = Date.now();
    if (tailStart) seen.tail = seen.tail.slice(tailStart);
    settle(seen);
  };
  const note = (chunk: Uint8Array) => {
    const n = chunk.byteLength;
    seen.bytes += n;
    if (seen.firstDataAt === undefined && carriesData(chunk)) {
      seen.firstDataAt = Date.now();
      opts.onFirstData?.(chunk);
    }
    if (headBytes < opts.headBytes) {
      seen.head.push(chunk);
      headBytes += n;
    }
    seen.tail.push(chunk);
    tailBytes += n;
    while (tailBytes - seen.tail[tailStart]!.byteLength >= opts.tailBytes) tailBytes -= seen.tail[tailStart++]!.byteLength;
    // Dropped chunks leave the array now and then, not on every chunk.
    if (tailStart > 256 && tailStart * 2 > seen.tail.length) {
      seen.tail = seen.tail.slice(tailStart);
      tailStart = 0;
    }
    if (seen.all) {
      if (seen.bytes <= opts.keepBytes) seen.all.push(chunk);
      else seen.kept = false;
    }
  };
  const reader = body.getReader();
  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let got: ReadableStreamReadResult<Uint8Array>;
        try {
          got = await reader.read();
        } catch (e) {
          end("cancelled");
          controller.error(e);
          return;
        }
        if (got.done) {
          controller.close();
          end("closed");
          return;
        }
        controller.enqueue(got.value);
        note(got.value);
      },
      cancel(reason) {
        end("cancelled");
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { readable, done };
}

/** Chunks as text (invalid UTF-8, such as a character cut at the tail's start, becomes U+FFFD). */
export function textOf(chunks: readonly Uint8Array[]): string {
  const decoder = new TextDecoder();
  let out = "";
  for (const c of chunks) out += decoder.decode(c, { stream: true });
  return out + decoder.decode();
}
