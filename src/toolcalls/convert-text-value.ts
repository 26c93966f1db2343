// Text dialects (Qwen3-Coder `<parameter=…>`, GLM `<arg_value>`, MiniMax `<parameter name=…>`)
// write every value as raw text. Reading it by the declared type is the dialect, not a mistake,
// so it is silent; only a value that needed jsonrepair is reported.

import {
  jsonBoolean,
  jsonNull,
  jsonNumber,
  jsonString,
  type JsonNode,
} from "./json-node.ts";
import { parseJson } from "./parse-json.ts";
import { parsePythonLiteral, toJsonNumberText } from "./parse-pythonic.ts";
import { problem } from "./problems.ts";
import { readJsonLenient } from "./read-json-lenient.ts";
import { schemaTypes } from "./schema-walk.ts";
import type { JsonSchema, ToolCallProblem } from "./types.ts";

const NUMBER = /^[+-]?(?:\d[\d_]*\.?[\d_]*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Raw parameter text as written between the tags, with the one newline on each side removed. */
export function trimParameterText(raw: string): string {
  return raw.replace(/^\r?\n/, "").replace(/\r?\n$/, "");
}

export function convertTextValue(
  raw: string,
  schema: JsonSchema | undefined,
  root: JsonSchema,
  path: string,
): { node: JsonNode; problems: ToolCallProblem[] } {
  const text = trimParameterText(raw);
  const s = text.trim();
  const types = schemaTypes(schema, root);
  const ok = (node: JsonNode) => ({ node, problems: [] as ToolCallProblem[] });

  if (types.size === 1 && types.has("string")) return ok(jsonString(text));
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
