// Loads the BFCL slice (JSON Lines, answers aligned by id) and converts Gorilla function
// declarations to OpenAI tools the way BFCL does for native tool-call models (GORILLA_TO_OPENAPI,
// names with "." → "_").

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromNode } from "./python-values.mjs";

/**
 * A Gorilla function declaration, as BFCL writes it (JSON Schema with Python type names).
 * @typedef {{ type?: string, description?: string, properties?: Record<string, GorillaSchema>, required?: string[], items?: GorillaSchema, enum?: unknown[], optional?: boolean, format?: string }} GorillaSchema
 * @typedef {{ name: string, description: string, parameters: GorillaSchema }} GorillaFunction
 * @typedef {import("./python-values.mjs").PyValue} PyValue
 * @typedef {Map<string, Map<string, PyValue>>} Answer one ground-truth call: function name → parameter → its acceptable values (a list)
 * @typedef {ReturnType<typeof loadCategory>[number]} Question
 */

/** @type {Record<string, string>} */
const GORILLA_TO_OPENAPI = {
  dict: "object", object: "object", HashMap: "object", Hashtable: "object",
  float: "number", double: "number", number: "number",
  integer: "integer", byte: "integer", short: "integer", long: "integer", Bigint: "integer",
  string: "string", String: "string", char: "string", any: "string", Any: "string",
  boolean: "boolean", bool: "boolean",
  array: "array", list: "array", tuple: "array", ArrayList: "array", Array: "array", Queue: "array", Stack: "array",
};

/**
 * @param {GorillaSchema} schema
 * @returns {GorillaSchema}
 */
function convertSchema(schema) {
  const out = { ...schema };
  if ("type" in schema) out.type = GORILLA_TO_OPENAPI[schema.type ?? ""] ?? "string";
  if (schema.type === "float") {
    out.format = "float";
    out.description = `${schema.description ?? ""} This is a float type value.`;
  }
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, convertSchema(v)]));
  }
  if (schema.items) out.items = convertSchema(schema.items);
  delete out.optional;
  return out;
}

/**
 * @param {GorillaFunction} func
 * @returns {import("../../src/toolcalls/index.ts").ToolDefinition}
 */
export function toOpenAiTool(func) {
  return {
    type: "function",
    function: {
      name: func.name.replace(/\./g, "_"),
      description: `${func.description} Note that the provided function is in Python 3 syntax.`,
      parameters: convertSchema(func.parameters),
    },
  };
}

const readLines = (/** @type {string} */ path) => readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");

/**
 * Questions of one category with their answers as Python-typed values:
 * answers = [Map(functionName → Map(param → [acceptable values]))].
 * @param {string} dir
 * @param {string} category
 * @param {import("./build-engine.mjs").Engine} engine
 */
export function loadCategory(dir, category, engine) {
  /** @type {Array<{ id: string, question: Array<Array<{ role: string, content: string }>>, function: GorillaFunction[] }>} */
  const questions = readLines(join(dir, `BFCL_v4_${category}.json`)).map((l) => JSON.parse(l));
  /** @type {Map<string, Answer[]> | null} */
  let answers = new Map();
  try {
    for (const line of readLines(join(dir, "possible_answer", `BFCL_v4_${category}.json`))) {
      const node = engine.parseJson(line);
      if (!node) throw new Error(`possible_answer/BFCL_v4_${category}.json: a line is not JSON: ${line.slice(0, 80)}`);
      const typed = dict(fromNode(node, engine.isFloatText));
      const id = String(typed.get("id")?.v);
      const calls = list(typed.get("ground_truth")).map((call) => new Map([...dict(call)].map(([name, args]) => [name, new Map(dict(args))])));
      answers.set(id, calls);
    }
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code !== "ENOENT") throw e;
    answers = null;
  }
  return questions.map((q) => ({
    id: q.id,
    category,
    question: q.question[0]?.find((m) => m.role === "user")?.content ?? "",
    functions: q.function,
    tools: q.function.map(toOpenAiTool),
    answers: answers ? answers.get(q.id) : null,
  }));
}

/**
 * A dict's entries (a possible_answer line is dicts of lists: anything else is a broken file).
 * @param {PyValue | undefined} x
 */
function dict(x) {
  if (x?.t !== "dict") throw new Error(`possible_answer: expected a dict, got ${x?.t}`);
  return x.v;
}

/** @param {PyValue | undefined} x */
function list(x) {
  if (x?.t !== "list") throw new Error(`possible_answer: expected a list, got ${x?.t}`);
  return x.v;
}
