import { describe, expect, it } from "vitest";
import { TOOLS } from "./fixtures.ts";
import { rewriteToolCalls } from "./helpers.ts";

// Outputs that mention tools or contain JSON but call nothing: each must stay content, unchanged.
const PROSE = {
  "talks about a tool": "I could use get_weather for that, but you asked about history.",
  "mentions the call with its arguments as JSON": 'I will call get_weather with {"city": "Paris"} once you confirm.',
  "shows unrelated JSON": 'Here is your record: {"name": "John", "age": 30}. Anything else?',
  "JSON naming an undeclared tool": '{"name": "book_flight", "arguments": {"to": "Paris"}}',
  "pythonic call in the middle of a sentence": 'You could run get_weather(city="Paris") yourself.',
  "a line that starts with a tool name": "get_weather is the tool for forecasts.\nIt needs a city.",
  "a signature, not a call": "The signature is:\nget_weather(city, days)",
  "a Python code block using a tool name": "```python\nresult = get_weather(city='Paris')\nprint(result)\n```",
  "a JSON code block that is data": '```json\n{"city": "Paris", "temperature": 21}\n```',
  "braces and brackets in prose": "Use {curly} braces, [square] brackets and <angle> brackets; see [1].",
  "a bullet list of tools": "Available tools:\n- get_weather: current weather\n- get_time: the time in a zone",
  "a call with a hallucinated parameter inside prose": 'Try {"name": "get_weather", "arguments": {"town": "Paris"}} later.',
  "a markdown table": "| tool | use |\n|---|---|\n| get_weather | weather |",
  "an empty list": "[]",
};

describe("prose is not a call", () => {
  for (const [name, text] of Object.entries(PROSE)) {
    it(name, () => {
      const r = rewriteToolCalls({ tools: TOOLS, text });
      expect(r.tool_calls).toEqual([]);
      expect(r.content).toBe(text.trim());
    });
  }

  it("but a complete, fitting call inside prose is one", () => {
    const r = rewriteToolCalls({
      tools: TOOLS,
      text: 'Calling it now: {"name": "get_weather", "arguments": {"city": "Paris"}} and waiting.',
    });
    expect(r.tool_calls.map((c) => c.function.name)).toEqual(["get_weather"]);
    expect(r.content).toBe("Calling it now: and waiting.");
  });
});
