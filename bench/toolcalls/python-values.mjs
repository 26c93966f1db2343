// Python-typed values, so the checker can tell 10 (int) from 10.0 (float) as BFCL does.
// A value is {t: "int"|"float"|"str"|"bool"|"none"|"list"|"dict", v}.

/**
 * @typedef {{ t: "int" | "float", v: number } | { t: "str", v: string } | { t: "bool", v: boolean } | { t: "none", v: null }
 *   | { t: "list", v: PyValue[] } | { t: "dict", v: Map<string, PyValue> }} PyValue
 */

/**
 * From a lexeme-preserving JSON node (the engine's parseJson): number text decides int/float.
 * @param {import("../../src/toolcalls/index.ts").JsonNode} node
 * @param {(text: string) => boolean} isFloatText
 * @returns {PyValue}
 */
export function fromNode(node, isFloatText) {
  switch (node.kind) {
    case "number":
      return isFloatText(node.text) ? { t: "float", v: node.value } : { t: "int", v: node.value };
    case "string":
      return { t: "str", v: node.value };
    case "boolean":
      return { t: "bool", v: node.value };
    case "null":
      return { t: "none", v: null };
    case "array":
      return { t: "list", v: node.items.map((n) => fromNode(n, isFloatText)) };
    case "object": {
      /** @type {Map<string, PyValue>} */
      const m = new Map();
      for (const e of node.entries) m.set(e.key, fromNode(e.value, isFloatText));
      return { t: "dict", v: m };
    }
  }
  throw new Error(`unknown node ${/** @type {{ kind: string }} */ (node).kind}`);
}

/**
 * @param {PyValue} x
 * @returns {x is Extract<PyValue, { t: "int" | "float" | "bool" }>}
 */
const numeric = (x) => x.t === "int" || x.t === "float" || x.t === "bool";
const num = (/** @type {Extract<PyValue, { t: "int" | "float" | "bool" }>} */ x) => (x.t === "bool" ? (x.v ? 1 : 0) : x.v);

/**
 * Python ==.
 * @param {PyValue} a
 * @param {PyValue} b
 * @returns {boolean}
 */
export function pyEq(a, b) {
  if (numeric(a) && numeric(b)) return num(a) === num(b);
  if (a.t !== b.t) return false;
  if (a.t === "str") return a.v === b.v;
  if (a.t === "none") return true;
  if (a.t === "list" && b.t === "list") return a.v.length === b.v.length && a.v.every((x, i) => pyEq(x, b.v[i]));
  if (a.t === "dict" && b.t === "dict") {
    if (a.v.size !== b.v.size) return false;
    for (const [k, x] of a.v) {
      const y = b.v.get(k);
      if (y === undefined || !pyEq(x, y)) return false;
    }
    return true;
  }
  return false;
}

/**
 * Python `x in list`.
 * @param {PyValue} x
 * @param {PyValue[]} list
 */
export const pyIn = (x, list) => list.some((y) => pyEq(x, y));

export const isEmptyString = (/** @type {PyValue} */ x) => x.t === "str" && x.v === "";
