// Hostile output that names no dialect: whitespace floods, nested and unbalanced brackets, deep
// JSON, huge keys and names, many calls, and (in a request of 128 tools with 64-character names,
// OpenAI's limits) near-miss names that each ask for a fuzzy match. Each within the work budget.

import { describe } from "vitest";
import type { ToolDefinition } from "../toolcalls/imports.ts";
import { climbCases } from "./climb-cases.ts";
import { flood } from "./hostile-text.ts";

const CALL = '<tool_call>{"name": "get_weather", "arguments": ';
const END = "}</tool_call>";

/** `{"a":{"a":…1…}}` or `[[…1…]]`, about `chars` long. */
const deep = (chars: number, kind: "object" | "array"): string => {
  const [open, close] = kind === "object" ? ['{"a":', "}"] : ["[", "]"];
  const d = Math.max(1, Math.floor(chars / (open.length + close.length)));
  return open.repeat(d) + "1" + close.repeat(d);
};

/** 128 declared tools whose 64-character names differ only in their last characters. */
const MANY_TOOLS: ToolDefinition[] = Array.from({ length: 128 }, (_, i) => ({
  type: "function",
  function: { name: `tool_${"x".repeat(53)}_${String(i).padStart(4, "0")}`, parameters: { type: "object", properties: { q: { type: "string" } } } },
}));
/** A call to none of them: as long as each, a few edits away from all. */
const NEAR_MISS = `<tool_call>{"name": "tool_${"x".repeat(50)}yyy_99zz", "arguments": {"q": "a"}}</tool_call>\n`;

describe("floods", () => {
  climbCases({
    "spaces": { text: (n) => flood("", " ", n) },
    "newlines": { text: (n) => flood("", "\n", n) },
    "Unicode whitespace": { text: (n) => flood("", "\u00a0\u3000\u2028", n, "x") },
    "[ and a flood of spaces": { text: (n) => flood("[", " ", n, "x") },
    '{" and a flood of spaces': { text: (n) => flood('{"', " ", n, "x") },
    "a text ending in { with spaces between pieces": { text: (n) => flood("Here: ", "{ ", n) },
  });
});

describe("brackets", () => {
  climbCases({
    "[[[[…": { text: (n) => flood("", "[", n) },
    "{{{{…": { text: (n) => flood("", "{", n) },
    "[{[{…": { text: (n) => flood("", "[{", n) },
    "({[<…": { text: (n) => flood("", "({[<", n) },
    "]]]]…": { text: (n) => flood("", "]", n) },
    "}}}}…": { text: (n) => flood("", "}", n) },
    "balanced deep arrays": { text: (n) => deep(n, "array") },
    "balanced deep objects": { text: (n) => deep(n, "object") },
    '{"a": [ repeated, unclosed': { text: (n) => flood("", '{"a": [', n) },
    "a line of [ per line": { text: (n) => flood("", "[\n", n) },
  });
});

describe("calls with hostile JSON", () => {
  climbCases({
    "deep arrays as the arguments": { text: (n) => CALL + deep(n, "array") + END },
    "deep objects as the arguments": { text: (n) => CALL + deep(n, "object") + END },
    "deep objects as a bare JSON call's arguments": { text: (n) => '{"name": "get_weather", "arguments": ' + deep(n, "object") + "}" },
    "a huge key": { text: (n) => flood(CALL + '{"', "k", n, '": 1}' + END) },
    "a huge string value": { text: (n) => flood(CALL + '{"city": "', "P", n, '"}' + END) },
    "many keys": { text: (n) => CALL + "{" + Array.from({ length: Math.ceil(n / 12) }, (_, i) => `"k${i}": 1`).join(", ") + "}" + END },
    "a huge number": { text: (n) => flood(CALL + '{"days": ', "9", n, "}" + END) },
    "an unclosed string": { text: (n) => flood(CALL + '{"city": "', "\\\"", n) },
    "single quotes to repair": { text: (n) => flood(CALL + "{'city': '", "Paris ', 'x': '", n, "'}" + END) },
  });
});

describe("many calls and huge names", () => {
  climbCases({
    "many tagged calls": { text: (n) => flood("", '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}</tool_call>\n', n) },
    "one JSON array of many calls": { text: (n) => flood("[", '{"name": "get_weather", "arguments": {"city": "P"}}, ', n, '{"name": "get_time", "arguments": {"tz": "CET"}}]') },
    "many pythonic calls": { text: (n) => flood("[", 'get_weather(city="P"), ', n, 'get_time(tz="CET")]') },
    "many bare JSON calls, one a line": { text: (n) => flood("", '{"name": "get_weather", "arguments": {"city": "P"}}\n', n) },
    "a huge near-miss name in a tagged call": { text: (n) => flood('<tool_call>{"name": "get_weathe', "r", n, '", "arguments": {}}</tool_call>') },
    "a huge name in <function=": { text: (n) => flood("<function=get_weathe", "r", n, ">{}</function>") },
    "a huge pythonic name": { text: (n) => flood("get_weathe", "r", n, '(city="P")') },
    "128 tools of 64 characters, many near-miss calls": { text: (n) => flood("", NEAR_MISS, n), tools: MANY_TOOLS },
    "128 tools of 64 characters, one huge near-miss name": { text: (n) => flood(`<tool_call>{"name": "tool_${"x".repeat(50)}`, "y", n, '", "arguments": {}}</tool_call>'), tools: MANY_TOOLS },
  });
});
