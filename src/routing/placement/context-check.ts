// The window check of a request against its targets (docs/reliability.md, "Context-aware routing"):
// each llama-server's estimate of the prompt's tokens decides alone when it is clearly below or
// above the server's window; near it, the server's own count (its template, then its tokenizer)
// decides. Counts are cached per server and prompt, and teach the server's token model.
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { ProxyError } from "../../errors/proxy-error.ts";
import { estimateFit, tokensFit, type Fit, type PromptSize } from "../../upstreams/context-fit.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { ServerLedger } from "./server-ledger.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";

/** What the servers themselves can tell of a request's fit (undefined: they could not tell now). */
export interface ServerCounts {
  /** The server's exact count of the prompt's tokens (then the estimate stands aside: the prompt is sent). */
  count(target: Target): Promise<number | undefined>;
  /** The server's per-request window from its own `/props`, before the health hub has sampled it. */
  window(target: Target): Promise<number | undefined>;
}

/** Exact counts remembered (server and prompt hash → tokens), the least recently used forgotten first. */
const COUNTS_KEPT = 4096;

let counts = new Map<string, number>();

/** Tests: forget every count. */
export function resetTokenCounts(): void {
  counts = new Map();
}

function remembered(server: string, hash: string): number | undefined {
  const k = `${server}\u0000${hash}`;
  const n = counts.get(k);
  if (n !== undefined) {
    counts.delete(k);
    counts.set(k, n);
  }
  return n;
}

function remember(server: string, hash: string, tokens: number): void {
  counts.set(`${server}\u0000${hash}`, tokens);
  if (counts.size > COUNTS_KEPT) counts.delete(counts.keys().next().value!);
}

/**
 * The estimate of the prompt's tokens on `server`: the exact count of its longest prefix counted
 * before (a conversation's earlier turn) plus the rest at the server's per-character rate, else the
 * server's token model over the whole prompt.
 */
export function estimateTokens(ledger: ServerLedger, server: string, size: PromptSize): number {
  const model = ledger.tokenModel(server);
  const prefixes = size.prefixes ?? [];
  for (let i = prefixes.length - 2; i >= 0; i--) {
    const known = remembered(server, prefixes[i]!.hash);
    if (known !== undefined) return Math.round(known + model.fitted().rate * (size.chars - prefixes[i]!.chars));
  }
  return model.estimate(size.chars);
}

/**
 * The targets by context fit, keeping their order within each group: those that hold the prompt and
 * max_tokens (or whose window is unknown: browser targets, servers not sampled yet) first, then those
 * that hold only the prompt (also listed as `promptOnly`); those that cannot hold the prompt are left out, with the error each
 * would have answered. Only a server that reports its context window is weighed; the others
 * (browser sessions, whose hub checks its own engines; OpenAI-compatible servers) count as fitting.
 * The counts near a window are asked of the servers at once, in parallel.
 */
export async function byContext(
  targets: readonly Target[],
  size: PromptSize,
  snapshot: HealthSnapshot,
  ledger: ServerLedger,
  servers: ServerCounts | undefined,
): Promise<{ ordered: Target[]; promptOnly: Target[]; tooLong: Array<{ target: Target; error: ProxyError }> }> {
  const last = size.prefixes?.at(-1);
  const fits = await Promise.all(
    targets.map(async (t): Promise<Fit> => {
      const server = capabilitiesOf(t).server;
      if (!server?.reportsContextWindow) return { fit: "fits" };
      // A server not sampled yet (a fresh isolate's first requests) tells its window itself: a read cached per isolate.
      const window = snapshot.upstreams[server.key]?.contextWindow ?? (await servers?.window(t).catch(() => undefined));
      if (window === undefined) return { fit: "fits" };
      const exact = last ? remembered(server.key, last.hash) : undefined;
      if (exact !== undefined) return tokensFit(exact, size.maxTokens, window);
      const f = estimateFit(estimateTokens(ledger, server.key, size), size.maxTokens, window);
      if (f !== "count") return f;
      const n = await servers?.count(t).catch(() => undefined);
      // Not counted (no answer in time, a server that cannot count): sent, and its own 400 moves on.
      if (n === undefined) return { fit: "fits" };
      if (last) remember(server.key, last.hash, n);
      ledger.tokenModel(server.key).add({ chars: size.chars, tokens: n });
      return tokensFit(n, size.maxTokens, window);
    }),
  );
  const ordered: Target[] = [];
  const promptOnly: Target[] = [];
  const tooLong: Array<{ target: Target; error: ProxyError }> = [];
  targets.forEach((t, i) => {
    const f = fits[i]!;
    if (f.fit === "fits") ordered.push(t);
    else if (f.fit === "prompt") promptOnly.push(t);
    else tooLong.push({ target: t, error: f.error });
  });
  return { ordered: [...ordered, ...promptOnly], promptOnly, tooLong };
}
