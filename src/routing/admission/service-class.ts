// A request's class in the admission line (docs/architecture.md, "Admission queue"): `service_tier`
// as a client asks it (flex, default, priority), bounded by its key's `maxServiceTier`, and the
// batch class below them all. The class is a dimension ahead of the key's `priority` and the fair
// rotation across keys: those keep working inside each class. Pure.
import { KEY_PRIORITY_MAX } from "../../auth/key-record.ts";
import type { ServiceTier } from "../../auth/service-tier.ts";

/** The admission classes, lowest first: batch lines run only where nothing else waits. */
export type AdmissionClass = "batch" | ServiceTier;

const RANK: Record<AdmissionClass, number> = { batch: 0, flex: 1, default: 2, priority: 3 };

/** The span of one class's levels: every key priority (±KEY_PRIORITY_MAX) and the continuation level above them. */
const CLASS_SPAN = 2 * (KEY_PRIORITY_MAX + 2);

/**
 * The FairQueue level of a request of class `cls` from a key of `priority`: classes are strict (a
 * flex request is served after every default one, whatever its key's priority), and inside a class
 * the key's priority orders as before. The default class's levels are the key priorities
 * themselves, so a deployment that never sends `service_tier` queues exactly as it did.
 */
export function admissionLevel(cls: AdmissionClass, priority: number): number {
  return (RANK[cls] - RANK.default) * CLASS_SPAN + priority;
}

/** The highest level of the batch class (a continued batch line's): every level above it is an interactive request's. */
export const BATCH_TOP_LEVEL = admissionLevel("batch", KEY_PRIORITY_MAX + 1);

/** Whether `a` is served before `b` (tests, docs). */
export function classAbove(a: AdmissionClass, b: AdmissionClass): boolean {
  return RANK[a] > RANK[b];
}
