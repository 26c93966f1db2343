// What attempts and answers write into an isolate's ServerLedger (src/routing/isolate/isolate-state.ts
// owns it), and what other isolates are told of a placement.
import { serviceEstimate, type PlacementRequest } from "./rank-servers.ts";
import type { ServerLedger } from "./server-ledger.ts";
import type { Timings, Usage } from "../../events/events.ts";
import type { PlacementNote } from "../../health/health-report.ts";

/** What other isolates need to know of a placement: the chain's first two prefixes and its last. */
export function placementNote(server: string, req: PlacementRequest, at: number): PlacementNote {
  const p = req.prefixes;
  return { url: server, key: req.key, prefixes: p.length <= 3 ? [...p] : [p[0]!, p[1]!, p.at(-1)!], at };
}

/** What the request is expected to cost on the server, for the in-flight estimate others queue behind. */
export function expectedServiceMs(ledger: ServerLedger, server: string, req: PlacementRequest | null, now: number): number {
  return serviceEstimate(ledger, server, req, now).service;
}

/** An answer's usage and llama-server timings (and the prompt's characters, when known), folded into the server's speeds. */
export function learnFromUsage(ledger: ServerLedger, server: string, chars: number | undefined, usage: Usage, timings: Timings | undefined): void {
  ledger.learn(server, {
    chars: chars ?? 0,
    promptTokens: usage.promptTokens,
    ...(timings?.prompt_n !== undefined ? { promptProcessed: timings.prompt_n } : {}),
    ...(timings?.prompt_ms !== undefined ? { promptMs: timings.prompt_ms } : {}),
    ...(timings?.predicted_n !== undefined ? { predictedTokens: timings.predicted_n } : {}),
    ...(timings?.predicted_ms !== undefined ? { predictedMs: timings.predicted_ms } : {}),
  });
}
