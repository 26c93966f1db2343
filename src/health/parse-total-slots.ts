// llama-server's slot count as its `/props` reports it (`total_slots`, its `--parallel`): read by the
// hub when `/slots` is off (`--no-slots`) and by the admission queue before the hub's first sample.
import * as z from "zod/mini";

const PropsSlots = z.object({ total_slots: z.int().check(z.gte(1)) });

/** `/props` → its `total_slots`, or undefined when the body has none (not llama-server, or an old build). */
export function parseTotalSlots(props: unknown): number | undefined {
  const parsed = PropsSlots.safeParse(props);
  return parsed.success ? parsed.data.total_slots : undefined;
}
