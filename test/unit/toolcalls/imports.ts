export * from "../../../src/toolcalls/index.ts";
export type { UpstreamEvent as UpstreamEventLike } from "../../../src/events/events.ts";
