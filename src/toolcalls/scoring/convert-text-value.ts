// Text dialects (Qwen3-Coder `<parameter=…>`, GLM `<arg_value>`, MiniMax `<parameter name=…>`,
// DSML, Kimi K3, MiniMax-M3's element trees) write every value as raw text. Reading it by the
// declared type is the dialect, not a mistake, so it is silent; only a value that needed jsonrepair
// is reported. The parsers have already removed the format's own whitespace: what is left is the value's.

import { escapePointer } from "./coerce-arguments.ts";
import {
  jsonArray,
  jsonBoolean,
  jsonNull,
  jsonNumber,
  jsonObject,
  jsonString,
  setEntry,
  type JsonEntry,
  type JsonNode,
} from "../json/json-node.ts";
import { parseJson } from "../json/parse-json.ts";
import { parsePythonLiteral, toJsonNumberText } from "../json/python-literal.ts";
import { appendAll, problem } from "./problems.ts";
import { readJsonLenient } from "../json/read-json-lenient.ts";
import type { TextEntry } from "./raw-call.ts";
import { itemSchema, propertySchema, schemaTypes } from "./schema-walk.ts";
import type { JsonSchema, ToolCallProblem } from "./types.ts";

// One way to read each number: `\d[\d_]*\.?[\d_]*` (two adjacent runs of the same class) made a
// long run of digits that does not end the value quadratic to refuse.
const NUMBER = /^[+-]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

type Read = { node: JsonNode; problems: ToolCallProblem[] };

/**
 * One parameter of a text dialect. An element tree (MiniMax-M3) becomes an object or an array as
 * the schema declares (an array when its elements are all `<item>`s and the schema allows both);
 * a parameter that may be a string keeps the text verbatim, tags and all, as llama.cpp does.
 */
export function convertTextEntry(entry: TextEntry, schema: JsonSchema | undefined, root: JsonSchema, path: string): Read {
  const children = entry.children;
  const types = schemaTypes(schema, root);
  const structured = types.has("array") || types.has("object") || types.size === 0;
  if (children && !types.has("string") && structured && (children.length > 0 || types.size > 0)) {
    const problems: ToolCallProblem[] = [];
    const items = children.every((c) => c.key === "item");
    if (types.has("array") ? !types.has("object") || items : types.size === 0 && items) {
      const nodes = children.map((c, i) => {
        const read = convertTextEntry(c, itemSchema(schema, root, i), root, `${path}/${i}`);
        appendAll(problems, read.problems);
        return read.node;
      });
      return { node: jsonArray(nodes), problems };
    }
    const entries: JsonEntry[] = [];
    for (const c of children) {
      const read = convertTextEntry(c, propertySchema(schema, root, c.key), root, `${path}/${escapePointer(c.key)}`);
      appendAll(problems, read.problems);
      setEntry(entries, c.key, read.node);
    }
    return { node: jsonObject(entries), problems };
  }
  return convertTextValue(entry.raw, schema, root, path, entry.hint);
}

export function convertTextValue(
  text: string,
  schema: JsonSchema | undefined,
  root: JsonSchema,
  path: string,
  hint?: TextEntry["hint"],
): Read {
  const s = text.trim();
  const types = schemaTypes(schema, root);
  const ok = (node: JsonNode) => ({ node, problems: [] as ToolCallProblem[] });

  if (types.size === 1 && types.has("string")) return ok(jsonString(text));
  // The schema does not say, the model did.
  if (types.size === 0 && hint === "string") return ok(jsonString(text));
  if ((types.has("integer") || types.has("number")) && NUMBER.test(s)) {
    const node = jsonNumber(toJsonNumberText(s));
    if (types.has("number") || Number.isInteger(node.kind === "number" ? node.value : NaN)) return ok(node);
  }
  if (types.has("boolean") && /^(true|false)$/i.test(s)) return ok(jsonBoolean(s.toLowerCase() === "true"));
  // Only a string parameter can mean the word itself.
  if (!(types.size === 1 && types.has("string")) && /^(null|None)$/.test(s)) return ok(jsonNull());
  if (types.has("array") || types.has("object") || types.size === 0) {
    const strict = parseJson(s) ?? parsePythonLiteral(s);
    if (strict && (types.size === 0 || strict.kind === "array" || strict.kind === "object")) return ok(strict);
    if (types.size > 0 && /^[[{]/.test(s)) {
      const lenient = readJsonLenient(s);
      if (lenient && (lenient.node.kind === "array" || lenient.node.kind === "object")) {
        return {
          node: lenient.node,
          problems: [problem("json_repaired", "the parameter value needed repair to read as JSON", path)],
        };
      }
    }
  }
  // Nothing fits: keep the text; validation reports the type.
  return ok(jsonString(text));
}
