import { describe, expect, it } from "vitest";
import { PENALTIES, scoreOf } from "./imports.ts";
import { TOOLS } from "./fixtures.ts";
import { rewriteToolCalls } from "./helpers.ts";

const one = (text: string) => {
  const r = rewriteToolCalls({ tools: TOOLS, text });
  expect(r.tool_calls).toHaveLength(1);
  return r.tool_calls[0]!;
};
const hermes = (args: string, name = "get_weather") => `<tool_call>{"name": "${name}", "arguments": ${args}}</tool_call>`;
const codes = (text: string) => one(text).problems.map((p) => `${p.code}${p.path ? ` ${p.path}` : ""}`);

describe("arguments", () => {
  it("passes clean JSON arguments through byte for byte", () => {
    const args = '{ "city" :  "Paris",\n  "days": 3.0 }';
    expect(one(hermes(args)).function.arguments).toBe(args);
  });

  it("keeps exactly the keys the model wrote: no defaults added, unknown ones kept", () => {
    const call = one(hermes('{"city": "Paris", "mood": "sunny"}'));
    expect(Object.keys(JSON.parse(call.function.arguments))).toEqual(["city", "mood"]);
  });

  it("keeps each number as written when it re-serializes", () => {
    const call = one("get_weather(city='Paris', days=10.0)");
    expect(call.function.arguments).toBe('{"city":"Paris","days":10.0}');
  });

  it("reads text-dialect values by the schema type without a problem", () => {
    const call = one("<tool_call>\n<function=get_weather>\n<parameter=city>\n10001\n</parameter>\n<parameter=days>\n7\n</parameter>\n</function>\n</tool_call>");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "10001", days: 7 });
    expect(call.problems).toEqual([]);
  });
});

describe("problem codes", () => {
  it("missing_required", () => expect(codes(hermes('{"days": 2}'))).toEqual(["missing_required /city"]));
  it("wrong_type (once, even when an enum also fails)", () =>
    expect(codes(hermes('{"city": "Paris", "unit": true}'))).toEqual(["wrong_type /unit"]));
  it("enum_mismatch", () => expect(codes(hermes('{"city": "Paris", "unit": "kelvin"}'))).toEqual(["enum_mismatch /unit"]));
  it("unknown_property", () => expect(codes(hermes('{"city": "Paris", "town": "x"}'))).toEqual(["unknown_property /town"]));
  it("coerced_type: a JSON string that means an integer", () => {
    const call = one(hermes('{"city": "Paris", "days": "5"}'));
    expect(call.problems.map((p) => p.code)).toEqual(["coerced_type"]);
    expect(call.function.arguments).toBe('{"city":"Paris","days":5}');
  });
  it("coerced_type: a number where a string is declared", () =>
    expect(JSON.parse(one(hermes('{"city": 75001}')).function.arguments)).toEqual({ city: "75001" }));
  it("name_case_mismatch", () => expect(codes(hermes('{"city": "Paris"}', "Get_Weather"))).toEqual(["name_case_mismatch"]));
  it("name_fuzzy_match", () => {
    const call = one(hermes('{"city": "Paris"}', "get_wether"));
    expect(call.function.name).toBe("get_weather");
    expect(call.problems.map((p) => p.code)).toEqual(["name_fuzzy_match"]);
  });
  it("arguments_not_object", () => expect(codes(hermes('["Paris"]'))).toEqual(["arguments_not_object", "missing_required /city"]));
  it("positional_argument", () => {
    const call = one("get_weather('Paris', days=2)");
    expect(JSON.parse(call.function.arguments)).toEqual({ days: 2, city: "Paris" });
    expect(call.problems.map((p) => p.code)).toEqual(["positional_argument"]);
  });
  it("a hallucinated tool name is not a call", () => {
    const r = rewriteToolCalls({ tools: TOOLS, text: hermes('{"city": "Paris"}', "book_flight") });
    expect(r.tool_calls).toEqual([]);
  });
});

describe("score", () => {
  it("is 1 for a clean, valid call and Π(1 − penalty) otherwise", () => {
    expect(one(hermes('{"city": "Paris"}')).score).toBe(1);
    const call = one("{'name': 'get_weather', 'arguments': {'days': '3'}}");
    expect(call.problems.map((p) => p.code).sort()).toEqual(["coerced_type", "json_repaired", "missing_required"]);
    expect(call.score).toBe(scoreOf(call.problems));
    expect(call.score).toBeCloseTo((1 - PENALTIES.json_repaired) * (1 - PENALTIES.coerced_type) * (1 - PENALTIES.missing_required), 2);
  });

  const valid = '{"city": "Paris", "days": 3, "unit": "celsius"}';
  const invalid = {
    missing_required: '{"days": 3, "unit": "celsius"}',
    wrong_type: '{"city": "Paris", "days": "three", "unit": "celsius"}',
    enum_mismatch: '{"city": "Paris", "days": 3, "unit": "kelvin"}',
    unknown_property: '{"city": "Paris", "days": 3, "unit": "celsius", "x": 1}',
    coerced_type: '{"city": "Paris", "days": "3", "unit": "celsius"}',
  };
  for (const [kind, args] of Object.entries(invalid)) {
    it(`orders a valid call above one with ${kind}`, () => {
      expect(one(hermes(valid)).score).toBeGreaterThan(one(hermes(args)).score);
    });
  }

  it("orders by how the call was read: clean > repaired > truncated", () => {
    const clean = one('{"name": "get_weather", "arguments": {"city": "Paris"}}').score;
    const repaired = one('{"name": "get_weather", "arguments": {"city": "Paris",}}').score;
    const truncated = one('{"name": "get_weather", "arguments": {"city": "Paris"').score;
    expect(clean).toBeGreaterThan(repaired);
    expect(repaired).toBeGreaterThan(truncated);
  });

  it("every problem code has a documented penalty in [0, 1]", () => {
    for (const penalty of Object.values(PENALTIES)) {
      expect(penalty).toBeGreaterThanOrEqual(0);
      expect(penalty).toBeLessThanOrEqual(1);
    }
  });
});

describe("arguments with keys that name Object.prototype members", () => {
  it("are own keys the schema does not declare, never the prototype's: kept, scored, and no object's prototype replaced", () => {
    // Broken JSON (a trailing comma) goes through the repaired-tree path that rebuilds the object.
    const call = one(hermes('{"city": "Paris", "constructor": 1, "__proto__": {"polluted": true}, "toString": "x",}'));
    const args = JSON.parse(call.function.arguments);
    expect(Object.keys(args)).toEqual(["city", "constructor", "__proto__", "toString"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Each is flagged as a key the tool never declared (before, `key in properties` found the
    // prototype's constructor and toString and took them for parameters).
    expect(call.problems.filter((p) => p.code === "unknown_property").map((p) => p.path)).toEqual(["/constructor", "/__proto__", "/toString"]);
    expect(call.score).toBeGreaterThan(0);
  });

  it("a schema type that names a prototype member is not an alias", () => {
    const tools = [{ type: "function" as const, function: { name: "f", parameters: { type: "object", properties: { a: { type: "constructor" } } } } }];
    const r = rewriteToolCalls({ tools, text: '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>' });
    expect(r.tool_calls).toHaveLength(1);
  });
});
