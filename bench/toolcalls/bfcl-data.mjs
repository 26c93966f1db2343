// Loads the BFCL slice (JSON Lines, answers aligned by id) and converts Gorilla function
// declarations to OpenAI tools the way BFCL does for native tool-call models (GORILLA_TO_OPENAPI,
// names with "." → "_").

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromNode } from "./python-values.mjs";

const GORILLA_TO_OPENAPI = {
  dict: "object", object: "object", HashMap: "object", Hashtable: "object",
  float: "number", double: "number", number: "number",
  integer: "integer", byte: "integer", short: "integer", long: "integer", Bigint: "integer",
  string: "string", String: "string", char: "string", any: "string", Any: "string",
  boolean: "boolean", bool: "boolean",
  array: "array", list: "array", tuple: "array", ArrayList: "array", Array: "array", Queue: "array", Stack: "array",
};

function convertSchema(schema) {
  const out = { ...schema };
  if ("type" in schema) out.type = GORILLA_TO_OPENAPI[schema.type] ?? "string";
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

const readLines = (path) => readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");

/**
 * Questions of one category with their answers as Python-typed values:
 * answers = [Map(functionName → Map(param → [acceptable values]))].
 */
export function loadCategory(dir, category, engine) {
  const questions = readLines(join(dir, `BFCL_v4_${category}.json`)).map((l) => JSON.parse(l));
  let answers = new Map();
  try {
    for (const line of readLines(join(dir, "possible_answer", `BFCL_v4_${category}.json`))) {
      const typed = fromNode(engine.parseJson(line), engine.isFloatText);
      const id = typed.v.get("id").v;
      const calls = typed.v.get("ground_truth").v.map((call) => new Map([...call.v].map(([name, args]) => [name, new Map([...args.v].map(([p, alts]) => [p, alts]))])));
      answers.set(id, calls);
    }
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
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
