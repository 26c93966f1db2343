// A JSON value that remembers where it came from and how each number was written. JSON.parse
// forgets both: `10` and `10.0` become the same JS number, and the exact bytes of the arguments
// object are lost, but a faithful pass-through and BFCL's int/float rule need them.

export type JsonNode =
  | { kind: "object"; entries: JsonEntry[]; start: number; end: number }
  | { kind: "array"; items: JsonNode[]; start: number; end: number }
  | { kind: "string"; value: string; start: number; end: number }
  | { kind: "number"; text: string; value: number; start: number; end: number }
  | { kind: "boolean"; value: boolean; start: number; end: number }
  | { kind: "null"; start: number; end: number };

export interface JsonEntry {
  key: string;
  value: JsonNode;
}

export type JsonObjectNode = Extract<JsonNode, { kind: "object" }>;

/** Plain JS value, as JSON.parse would give it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

// Nodes built by code rather than read from text have no span.
const NO_SPAN = { start: -1, end: -1 };

export const jsonString = (value: string): JsonNode => ({ kind: "string", value, ...NO_SPAN });
export const jsonNull = (): JsonNode => ({ kind: "null", ...NO_SPAN });
export const jsonBoolean = (value: boolean): JsonNode => ({ kind: "boolean", value, ...NO_SPAN });
export const jsonArray = (items: JsonNode[]): JsonNode => ({ kind: "array", items, ...NO_SPAN });
export const jsonObject = (entries: JsonEntry[]): JsonObjectNode => ({
  kind: "object",
  entries,
  ...NO_SPAN,
});
/** `text` must already be a valid JSON number. */
export const jsonNumber = (text: string): JsonNode => ({
  kind: "number",
  text,
  value: Number(text),
  ...NO_SPAN,
});

// Each entry list built by setEntry keeps an index by key, so building an object of n keys is
// linear (a search per key made 50,000 distinct keys take seconds).
const indexes = new WeakMap<JsonEntry[], Map<string, JsonEntry>>();

/** Sets a key the way JSON.parse does: a repeated key keeps its first position and its last value. */
export function setEntry(entries: JsonEntry[], key: string, value: JsonNode): void {
  // A short list is searched: an index would cost more than it saves.
  if (entries.length < 16) {
    const existing = entries.find((e) => e.key === key);
    if (existing) existing.value = value;
    else entries.push({ key, value });
    return;
  }
  let index = indexes.get(entries);
  // Rebuilt when the list was changed some other way (its length tells).
  if (!index || index.size !== entries.length) {
    index = new Map(entries.map((e) => [e.key, e]));
    indexes.set(entries, index);
  }
  const existing = index.get(key);
  if (existing) existing.value = value;
  else {
    const entry = { key, value };
    entries.push(entry);
    index.set(key, entry);
  }
}

export function getEntry(node: JsonNode, key: string): JsonNode | undefined {
  if (node.kind !== "object") return undefined;
  return node.entries.find((e) => e.key === key)?.value;
}

export function toJsonValue(node: JsonNode): JsonValue {
  switch (node.kind) {
    case "object": {
      const out: { [key: string]: JsonValue } = {};
      // defineProperty, not assignment: a "__proto__" key the model wrote stays an own key (as
      // JSON.parse keeps it) instead of replacing the object's prototype.
      for (const e of node.entries) Object.defineProperty(out, e.key, { value: toJsonValue(e.value), enumerable: true, configurable: true, writable: true });
      return out;
    }
    case "array":
      return node.items.map(toJsonValue);
    case "number":
      return node.value;
    case "null":
      return null;
    default:
      return node.value;
  }
}

/** Compact JSON, with every number written exactly as its source text. */
export function serializeJson(node: JsonNode): string {
  switch (node.kind) {
    case "object":
      return `{${node.entries.map((e) => `${JSON.stringify(e.key)}:${serializeJson(e.value)}`).join(",")}}`;
    case "array":
      return `[${node.items.map(serializeJson).join(",")}]`;
    case "string":
      return JSON.stringify(node.value);
    case "number":
      return node.text;
    case "boolean":
      return node.value ? "true" : "false";
    case "null":
      return "null";
  }
}

/** A JSON number's text, read the way Python reads it: `.`, `e` or `E` make it a float. */
export function isFloatText(text: string): boolean {
  return /[.eE]/.test(text);
}
