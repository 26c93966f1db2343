// A call as a dialect parser read it, before its name is resolved and its arguments are checked.

import type { JsonNode } from "../json/json-node.ts";
import type { ToolCallProblem } from "./types.ts";

export type RawArguments =
  /** Typed values (JSON, Python literals). `verbatim` is the model's own argument text when it was clean JSON. */
  | { kind: "node"; node: JsonNode; verbatim?: string }
  /** Raw text per parameter (XML-style dialects), read by the schema type. */
  | { kind: "text"; entries: TextEntry[] };

/**
 * One parameter of an XML-style call: its value exactly as the model wrote it, without the format's
 * own whitespace (Qwen3-Coder's newline after `<parameter=k>` is the format's, Seed-OSS has none).
 */
export interface TextEntry {
  key: string;
  raw: string;
  /**
   * What the model said the value is, where the format says it: DSML's `string="true"`, Kimi K3's
   * `type="string"`. Read only when the schema does not declare a type.
   */
  hint?: "string" | "json";
  /**
   * The child elements, when the value is nothing but elements (MiniMax-M3 writes objects as one
   * element per key and arrays as repeated `<item>`s). A string parameter still takes `raw`.
   */
  children?: TextEntry[];
}

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
