// A call as a dialect parser read it, before its name is resolved and its arguments are checked.

import type { JsonNode } from "./json-node.ts";
import type { ToolCallProblem } from "./types.ts";

export type RawArguments =
  /** Typed values (JSON, Python literals). `verbatim` is the model's own argument text when it was clean JSON. */
  | { kind: "node"; node: JsonNode; verbatim?: string }
  /** Raw text per parameter (XML-style dialects), read by the schema type. */
  | { kind: "text"; entries: Array<{ key: string; raw: string }> };

export interface RawCall {
  name: string;
  arguments: RawArguments;
  /** Problems found while reading: repair, truncation, a missing closing tag… */
  problems: ToolCallProblem[];
}

/** What a region of the output turned out to hold. */
export interface RegionParse {
  calls: RawCall[];
  /** Text the region stands for (`{"response": "…"}`), emitted as content. */
  content?: string;
  /** Offset in the region text where the calls ended; the rest goes back to be read as text. */
  rest?: number;
}
