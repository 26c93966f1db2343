// What one isolate keeps between requests for routing, built in this one place: the ledger of
// servers, the routers' model pool and its reads, the slot counts read from the servers, the
// admission queue over them, the tally of admissions through the shared line and its credits; and, when it is
// built, its listeners on the hub's news (other isolates' placements, restarts, the routers' models)
// registered with the health client. The attempt loop, the continuation, the model list and
// /metrics get it from isolateState(); placement and admission, below this folder, are handed the
// parts they use.
import { onPlacementNotes, onRestarts, onRouterModels } from "../../health/health-client.ts";
import { AdmissionQueue } from "../admission/admission-queue.ts";
import { CreditStock } from "../admission/credit-stock.ts";
import { newSharedCounts } from "../admission/hub-client.ts";
import { SlotCounts } from "../admission/slot-counts.ts";
import { ModelPool } from "../placement/model-pool.ts";
import { PoolReads } from "../placement/pool-reads.ts";
import { ServerLedger } from "../placement/server-ledger.ts";

/** An isolate's routing state. */
export class IsolateState {
  /** Where a turn would finish first: placement reads it, every attempt and answer writes it. */
  readonly ledger = new ServerLedger();
  /** Which models each llama-server router has loaded, and its reads of their `/models`. */
  readonly pool = new ModelPool();
  readonly poolReads = new PoolReads(this.pool);
  /** The slot counts this isolate read itself from its llama-servers' `/props`, until the hub's sample has them. */
  readonly slots = new SlotCounts();
  /** The fair line of requests waiting for a slot, over the ledger, the slot counts and the routers' models. */
  readonly queue = new AdmissionQueue(
    () => this.ledger,
    // A router's count is its loaded models' together (the pool's); /props tells one model's.
    (server) => this.pool.slots(server) ?? this.slots.learned(server),
    (server, model) => this.pool.hosting(server, model, Date.now()),
  );
  /** What this isolate's admissions through the pool's AdmissionHub came to (/metrics). */
  readonly sharedCounts = newSharedCounts();
  /** The slots the pools' AdmissionHubs set aside for this isolate's next requests. */
  readonly credits = new CreditStock();
}

/** A new state, its listeners on the hub's news registered (each replaces the previous state's). */
function build(): IsolateState {
  const state = new IsolateState();
  // Every isolate's placements, as the hub's snapshots bring them: the next turn of a conversation
  // another isolate placed finds the same server here.
  onPlacementNotes((notes) => {
    for (const n of notes) state.ledger.absorb(n.url, n.key, n.prefixes, n.at);
  });
  // A server that restarted holds none of what was placed there before.
  onRestarts((server, at) => state.ledger.restarted(server, at));
  // Each health sample of a router (the hub reads its /models every health.sampleMs while there is
  // traffic) updates the pool of a router this isolate already knows: loads and evictions others caused.
  onRouterModels((server, read) => {
    if (state.pool.isRouter(server)) state.pool.absorb(server, { models: read.models }, read.at);
  });
  return state;
}

let current: IsolateState | undefined;

/** This isolate's state: built by the app as it starts (src/app.ts), or by whatever asks first. */
export function isolateState(): IsolateState {
  return (current ??= build());
}

/** Tests: start from a new state (an empty ledger, pool, slot counts, line and shared tally). */
export function resetIsolateState(): IsolateState {
  return (current = build());
}
