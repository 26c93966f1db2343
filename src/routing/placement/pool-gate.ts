// Router pools' say over a request's attempts (docs/architecture.md, "Router pools"): the routers that
// do not list its model leave its plan, and before each attempt on a router, whether the model may be
// run or loaded there now. A refusal stands for the attempt, without asking the router.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { ModelPool, ModelView } from "./model-pool.ts";
import type { PoolEstimate } from "./rank-pool.ts";

/** A router an attempt runs the request's model on: its key, the model it is asked for, and what the pool knew of that model there. */
export interface PoolEntry {
  server: string;
  model: string;
  view: ModelView;
}

/** The gate's word on one attempt: go (with the router's entry, undefined for a target that is no router listing the model), or its refusal. */
export type PoolVerdict = { entry: PoolEntry | undefined } | { refused: ProxyError };

/**
 * The router pools' gate over one pass of a request's attempts. A router where the model failed to
 * load lately is not asked again, and the model is not loaded on another router by evicting a model
 * there: the same file most likely fails the same way (it may where there is room). Such a refusal
 * is not busy: it is the answer when nothing serves the model (it ranks as the request's own
 * failure). A router that would have to evict a model with requests in flight (or swap mid-load) is
 * full for this model until they drain; a load elsewhere that is clearly slower than the server a
 * refusal came from (`standby`) waits for it too, until the request has waited as long as that
 * load would take. Both are busy refusals: the request waits in line rather than thrash the routers.
 */
export class PoolGate {
  /** A router of the plan where the model failed to load lately. */
  private readonly failedOn: Target | undefined;

  constructor(
    /** This isolate's routers and their models (src/routing/isolate/isolate-state.ts). */
    private readonly pool: ModelPool,
    targets: readonly Target[],
    private readonly requested: string,
    now: number,
    /** When the request started trying targets: a standby load waits at most as long as the load. */
    private readonly requestStart: number,
  ) {
    this.failedOn = targets.find((t) => poolView(pool, t, requested, now)?.failed);
  }

  /**
   * Whether `target` may be tried now. `estimate`: the order's estimate of it (placement/rank-pool.ts);
   * `sawBusy`: a target was refused for capacity earlier in this pass.
   */
  check(target: Target, estimate: PoolEstimate | undefined, sawBusy: boolean): PoolVerdict {
    const server = capabilitiesOf(target).server?.key;
    const model = server !== undefined ? pooledModel(this.pool, target, this.requested) : undefined;
    const view = model !== undefined ? this.pool.view(server!, model, Date.now()) : undefined;
    if (!view) return { entry: undefined };
    if (view.failed || (this.failedOn && view.victim !== null && view.status === "unloaded")) {
      return { refused: loadFailedBefore(model!, view.failed ? target : this.failedOn!) };
    }
    if (view.victim === "busy" || (estimate?.standby && sawBusy && Date.now() - this.requestStart < view.loadMs)) {
      return { refused: new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, retryAfter: 1, message: `${target.name} is busy with other models; ${model} would have to wait for them.` }) };
    }
    return { entry: { server: server!, model: model!, view } };
  }
}

/**
 * The model `target` asks its server for when that server is a known router that lists it: the
 * target's own `model`, else the requested name. Undefined for any other target.
 */
export function pooledModel(pool: ModelPool, target: Target, requested: string): string | undefined {
  const server = capabilitiesOf(target).server;
  if (!server || !pool.isRouter(server.key)) return undefined;
  const model = server.upstreamModel ?? requested;
  return pool.lists(server.key, model) ? model : undefined;
}

/**
 * The plan without the routers that do not list the model (a router answers such a request with a
 * 400). When every server was such a router, 404 model_not_found: no server serves that name.
 */
export function withoutUnlisted(pool: ModelPool, targets: Target[], requested: string): Target[] {
  const unlisted = (t: Target) => {
    const server = capabilitiesOf(t).server;
    return server !== null && pool.isRouter(server.key) && pool.lists(server.key, server.upstreamModel ?? requested) === false;
  };
  const kept = targets.filter((t) => !unlisted(t));
  if (kept.length === targets.length) return targets;
  const servers = kept.filter((t) => capabilitiesOf(t).server !== null || !t.implicit);
  if (servers.length === 0) {
    const names = new Set(targets.filter(unlisted).flatMap((t) => pool.modelIds(capabilitiesOf(t).server!.key)));
    const some = [...names].slice(0, 20);
    throw new ProxyError({
      status: 404,
      code: "model_not_found",
      param: "model",
      message: `The model "${requested}" is not served here: no server lists it. Available: ${some.map((m) => `"${m}"`).join(", ") || "none"}${names.size > some.length ? ", …" : ""} (GET /v1/models lists them).`,
    });
  }
  return kept;
}

/** What the pool knows of the request's model on `target`'s router (undefined: not a router that lists it). */
function poolView(pool: ModelPool, target: Target, requested: string, now: number): ModelView | undefined {
  const model = pooledModel(pool, target, requested);
  return model !== undefined ? pool.view(capabilitiesOf(target).server!.key, model, now) : undefined;
}

/** The answer for a model that failed to load on `where` lately, without asking any server again. */
function loadFailedBefore(model: string, where: Target): ProxyError {
  return new ProxyError({
    status: 502,
    code: "model_load_failed",
    message: `The model "${model}" failed to load on ${where.name} within the last 5 minutes (a damaged or incompatible model file, or not enough memory); it is not tried again there, nor loaded elsewhere in place of a model in use. Check the server's log.`,
  });
}
