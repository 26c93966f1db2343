// Issue 26's CPU findings, reproduced at sizes the old parsers still finish (seconds, not hours):
// each must now be answered within the work budget, one-shot and streamed.

import { describe } from "vitest";
import { climbCases } from "./climb-cases.ts";
import { flood } from "./hostile-text.ts";

describe("issue 26 findings", () => {
  climbCases({
    // 1. parse-special-tokens.ts: three \s* in a row after the Mistral marker (cubic).
    "[TOOL_CALLS]f, a flood of spaces, x": { text: (n) => flood("[TOOL_CALLS]f", " ", n, "x") },
    "[TOOL_CALLS]get_weather, a flood of spaces, [ARGS]": { text: (n) => flood("[TOOL_CALLS]get_weather", " ", n, "[ARGS]") },
    // 3. parse-xml-calls.ts: GLM's <arg_key>/<arg_value> regex; a closing-tag search per <function=.
    "<tool_call>f and <arg_key>a</arg_key> repeated": { text: (n) => flood("<tool_call>f", "<arg_key>a</arg_key>", n) },
    "<tool_call>f and <arg_key>a</arg_key><arg_value> repeated": { text: (n) => flood("<tool_call>f", "<arg_key>a</arg_key><arg_value>", n) },
    "<tool_call> and <function=a> repeated": { text: (n) => flood("<tool_call>", "<function=a>", n) },
    "<tool_call><function=a> and <parameter=b> repeated": { text: (n) => flood("<tool_call><function=a>", "<parameter=b>", n) },
    '<minimax:tool_call> and <invoke name="a"> repeated': { text: (n) => flood("<minimax:tool_call>", '<invoke name="a">', n) },
    '<invoke name="a"> and <parameter name="b"> repeated': { text: (n) => flood('<invoke name="a">', '<parameter name="b">', n) },
    // 5. stream-rewriter.ts / candidate.ts: after a "maybe a call" {, every piece rescans the whitespace.
    "{ and a flood of spaces": { text: (n) => flood("{", " ", n, "x") },
    "{ and a flood of newlines": { text: (n) => flood("{", "\n", n, "x") },
    '{"name": "get_weather", "arguments": and a flood of spaces': { text: (n) => flood('{"name": "get_weather", "arguments": ', " ", n, "{}}") },
  });
});
