// Python-typed values, so the checker can tell 10 (int) from 10.0 (float) as BFCL does.
// A value is {t: "int"|"float"|"str"|"bool"|"none"|"list"|"dict", v}.

/** From a lexeme-preserving JSON node (the engine's parseJson): number text decides int/float. */
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
      const m = new Map();
      for (const e of node.entries) m.set(e.key, fromNode(e.value, isFloatText));
      return { t: "dict", v: m };
    }
  }
  throw new Error(`unknown node ${node.kind}`);
}

const numeric = (x) => x.t === "int" || x.t === "float" || x.t === "bool";
const num = (x) => (x.t === "bool" ? (x.v ? 1 : 0) : x.v);

/** Python ==. */
export function pyEq(a, b) {
  if (numeric(a) && numeric(b)) return num(a) === num(b);
  if (a.t !== b.t) return false;
  if (a.t === "str") return a.v === b.v;
  if (a.t === "none") return true;
  if (a.t === "list") return a.v.length === b.v.length && a.v.every((x, i) => pyEq(x, b.v[i]));
  if (a.t === "dict") {
    if (a.v.size !== b.v.size) return false;
    for (const [k, x] of a.v) if (!b.v.has(k) || !pyEq(x, b.v.get(k))) return false;
    return true;
  }
  return false;
}

/** Python `x in list`. */
export const pyIn = (x, list) => list.some((y) => pyEq(x, y));

export const isEmptyString = (x) => x.t === "str" && x.v === "";
