import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { llamaSseReader, type ChunkAdapter } from "../../../../src/upstreams/llama/parse-llama-sse.ts";

/** The events llama-server's SSE body gives, pushed in `parts` as they would arrive (bytes or text). */
export function readLlamaSse(parts: Array<string | Uint8Array>, upstream = "llama:test", asChat?: ChunkAdapter): UpstreamEvent[] {
  const out: UpstreamEvent[] = [];
  const reader = llamaSseReader(upstream, (e) => out.push(e), asChat);
  for (const p of parts) reader.push(p);
  reader.end();
  return out;
}
