// This isolate's one ServerLedger, kept in step with other isolates' placements through the hub,
// and the calls through which attempts and answers update it.
import { serviceEstimate, type PlacementRequest } from "./rank-servers.ts";
import { ServerLedger } from "./server-ledger.ts";
import type { Timings, Usage } from "../../events/events.ts";
import { onPlacementNotes, onRestarts } from "../../health/health-client.ts";
import type { PlacementNote } from "../../health/health-report.ts";

/** This isolate's ledger of servers (placement reads it, every attempt and answer writes it). */
export let ledger = new ServerLedger();

// Every isolate's placements, as the hub's snapshots bring them: the next turn of a conversation
// another isolate placed finds the same server here.
onPlacementNotes((notes) => {
  for (const n of notes) ledger.absorb(n.url, n.key, n.prefixes, n.at);
});
// A server that restarted holds none of what was placed there before.
onRestarts((server, at) => ledger.restarted(server, at));

/** What other isolates need to know of a placement: the chain's first two prefixes and its last. */
export function placementNote(server: string, req: PlacementRequest, at: number): PlacementNote {
  const p = req.prefixes;
  return { url: server, key: req.key, prefixes: p.length <= 3 ? [...p] : [p[0]!, p[1]!, p.at(-1)!], at };
}

/** Tests: start from an empty ledger. */
export function resetLedger(): void {
  ledger = new ServerLedger();
}

/** What the request is expected to cost on the server, for the in-flight estimate others queue behind. */
export function expectedServiceMs(server: string, req: PlacementRequest | null, now: number): number {
  return serviceEstimate(ledger, server, req, now).service;
}

/** An answer's usage and llama-server timings (and the prompt's characters, when known), folded into the server's speeds. */
export function learnFromUsage(server: string, chars: number | undefined, usage: Usage, timings: Timings | undefined): void {
  ledger.learn(server, {
    chars: chars ?? 0,
    promptTokens: usage.promptTokens,
    ...(timings?.prompt_n !== undefined ? { promptProcessed: timings.prompt_n } : {}),
    ...(timings?.prompt_ms !== undefined ? { promptMs: timings.prompt_ms } : {}),
    ...(timings?.predicted_n !== undefined ? { predictedTokens: timings.predicted_n } : {}),
    ...(timings?.predicted_ms !== undefined ? { predictedMs: timings.predicted_ms } : {}),
  });
}
