// BFCL's AST checker (gorilla, bfcl_eval/eval_checker/ast_eval/ast_checker.py) for the Python
// categories, ported to Python-typed values (python-values.mjs). Reference §4 describes it.
// `funcs` are the Gorilla function declarations; `output` is [{name: Map(args)}…] as decoded from
// the rewriter's tool_calls; `answers` are the ground-truth calls as Python-typed values.

import { isEmptyString, pyEq, pyIn } from "./python-values.mjs";

/**
 * @typedef {import("./python-values.mjs").PyValue} PyValue
 * @typedef {import("./bfcl-data.mjs").GorillaFunction} GorillaFunction
 * @typedef {import("./bfcl-data.mjs").Answer} Answer
 * @typedef {Map<string, Map<string, PyValue>>} OutputCall one decoded call: function name → argument → value
 */

/** @type {Record<string, PyValue["t"]>} */
const TYPE = { string: "str", integer: "int", float: "float", boolean: "bool", array: "list", tuple: "list", dict: "dict", any: "str" };

const standardize = (/** @type {string} */ s) => s.replace(/[ ,./\-_*^]/g, "").toLowerCase().replace(/'/g, '"');
/**
 * @param {PyValue} x
 * @returns {PyValue}
 */
const std = (x) => (x.t === "str" ? { t: "str", v: standardize(x.v) } : x);

/** @param {PyValue[]} possible */
function answerType(possible) {
  for (const a of possible) if (!isEmptyString(a)) return a.t;
  return null;
}

/**
 * @param {PyValue} value
 * @param {PyValue[]} possible
 * @param {string} expected
 * @param {string | null} nested
 * @returns {{ valid: boolean, isVariable?: boolean, error?: string }}
 */
function typeChecker(value, possible, expected, nested) {
  let isVariable = false;
  const paType = answerType(possible);
  if (paType !== null && paType !== expected) isVariable = true;
  if (value.t === expected) {
    if (nested === null) return { valid: true, isVariable };
    for (const item of possible) {
      let flag = true;
      if (item.t === "list" && value.t === "list") {
        for (const v of value.v) {
          if (!typeChecker(v, item.v, nested, null).valid) {
            flag = false;
            break;
          }
        }
      }
      if (flag) return { valid: true, isVariable };
    }
  }
  if (paType !== null && value.t === paType) return { valid: true, isVariable: true };
  return { valid: false, error: "type_error" };
}

/**
 * @param {Extract<PyValue, { t: "str" }>} value
 * @param {PyValue[]} possible
 */
function stringChecker(value, possible) {
  const want = possible.flatMap((p) => (p.t === "str" ? [standardize(p.v)] : []));
  return want.includes(standardize(value.v));
}

/**
 * @param {Extract<PyValue, { t: "list" }>} value
 * @param {PyValue[]} possible
 */
function listChecker(value, possible) {
  /** @type {PyValue} */
  const out = { t: "list", v: value.v.map(std) };
  return possible.some((p) => p.t === "list" && pyEq(out, { t: "list", v: p.v.map(std) }));
}

/**
 * @param {Extract<PyValue, { t: "dict" }>} value
 * @param {PyValue[]} possibles
 */
function dictChecker(value, possibles) {
  for (const possible of possibles) {
    if (isEmptyString(possible) || possible.t !== "dict") continue;
    let flag = true;
    for (const [key, v] of value.v) {
      const allowed = possible.v.get(key);
      if (!allowed || allowed.t !== "list" || !pyIn(std(v), allowed.v.map(std))) {
        flag = false;
        break;
      }
    }
    if (flag) {
      for (const [key, allowed] of possible.v) {
        if (!value.v.has(key) && !(allowed.t === "list" && allowed.v.some(isEmptyString))) {
          flag = false;
          break;
        }
      }
    }
    if (flag) return true;
  }
  return false;
}

/**
 * @param {Extract<PyValue, { t: "list" }>} value
 * @param {PyValue[]} possibles
 */
function listDictChecker(value, possibles) {
  for (const possible of possibles) {
    if (possible.t !== "list" || possible.v.length !== value.v.length) continue;
    if (value.v.every((d, i) => d.t === "dict" && dictChecker(d, [possible.v[i]]))) return true;
  }
  return false;
}

/**
 * One output call against one ground-truth call. Returns null when valid, else an error code.
 * @param {GorillaFunction} func
 * @param {OutputCall} call
 * @param {Answer} answer
 * @param {boolean} underscoreNames
 */
export function simpleFunctionChecker(func, call, answer, underscoreNames) {
  const [answerName, answerArgs] = [...answer.entries()][0] ?? [];
  const expected = underscoreNames ? func.name.replace(/\./g, "_") : func.name;
  void answerName;
  if (!answerArgs) throw new Error(`a ground-truth call of ${func.name} names no function`);
  const args = call.get(expected);
  if (!args) return "simple_function_checker:wrong_func_name";
  const props = func.parameters.properties ?? {};
  for (const r of func.parameters.required ?? []) if (!args.has(r)) return "simple_function_checker:missing_required";
  for (let [param, value] of args) {
    if (!(param in props) || !answerArgs.has(param)) return "simple_function_checker:unexpected_param";
    const desc = props[param] ?? {};
    const possible = listOf(answerArgs.get(param));
    const expectedType = TYPE[desc.type ?? ""] ?? "str";
    const nested = desc.type === "array" || desc.type === "tuple" ? TYPE[desc.items?.type ?? ""] ?? "str" : null;
    if (desc.type === "float" && value.t === "int") value = { t: "float", v: value.v };
    const tc = typeChecker(value, possible, expectedType, nested);
    if (!tc.valid) return "type_error";
    if (!tc.isVariable) {
      // typeChecker found `value` of the expected type (not a variable's).
      if (expectedType === "dict" && value.t === "dict") {
        if (!dictChecker(value, possible)) return "dict_checker:value_error";
        continue;
      }
      if (expectedType === "list" && nested === "dict" && value.t === "list") {
        if (!listDictChecker(value, possible)) return "list_dict_checker:value_error";
        continue;
      }
      if (expectedType === "str" && value.t === "str") {
        if (!stringChecker(value, possible)) return "value_error:string";
        continue;
      }
      if (expectedType === "list" && value.t === "list") {
        if (!listChecker(value, possible)) return "value_error:list/tuple";
        continue;
      }
    }
    if (!pyIn(value, possible)) return "value_error:others";
  }
  for (const [param, allowed] of answerArgs) {
    if (!args.has(param) && !listOf(allowed).some(isEmptyString)) return "simple_function_checker:missing_optional";
  }
  return null;
}

/**
 * A parameter's acceptable values (the ground truth lists them).
 * @param {PyValue | undefined} x
 */
function listOf(x) {
  if (x?.t !== "list") throw new Error(`a ground-truth parameter is not a list of acceptable values (${x?.t})`);
  return x.v;
}

/**
 * The category-level check: simple, multiple, parallel, parallel_multiple.
 * @param {string} category
 * @param {GorillaFunction[]} funcs
 * @param {OutputCall[]} output
 * @param {Answer[]} answers
 * @param {boolean} underscoreNames
 */
export function checkCategory(category, funcs, output, answers, underscoreNames) {
  const find = (/** @type {string | undefined} */ name) => {
    const func = funcs.find((f) => f.name === name);
    if (!func) throw new Error(`the ground truth calls ${name}, which the question does not declare`);
    return func;
  };
  if (category.includes("parallel")) {
    if (output.length !== answers.length) return "parallel_function_checker_no_order:wrong_count";
    const used = new Set();
    for (const answer of answers) {
      const func = find([...answer.keys()][0]);
      let matched = false;
      for (let i = 0; i < output.length; i++) {
        if (used.has(i)) continue;
        if (simpleFunctionChecker(func, output[i], answer, underscoreNames) === null) {
          used.add(i);
          matched = true;
          break;
        }
      }
      if (!matched) return "parallel_function_checker_no_order:cannot_find_match";
    }
    return null;
  }
  if (output.length !== answers.length) {
    return category.includes("multiple") ? "multiple_function_checker:wrong_count" : "simple_function_checker:wrong_count";
  }
  const [first] = answers;
  if (!first) throw new Error(`a ${category} question without a ground-truth call`);
  const func = find([...first.keys()][0]);
  return simpleFunctionChecker(func, output[0], first, underscoreNames);
}
