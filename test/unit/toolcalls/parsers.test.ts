import { describe, expect, it } from "vitest";
import { isFloatText, parseJson, toJsonValue } from "./imports.ts";
import { parsePythonicCalls, parsePythonLiteral } from "../../../src/toolcalls/parse-pythonic.ts";
import { serializeJson } from "../../../src/toolcalls/json-node.ts";
import { resolveToolName, foldName } from "../../../src/toolcalls/resolve-tool-name.ts";
import { newCallId } from "../../../src/toolcalls/call-id.ts";

describe("lexeme-preserving JSON", () => {
  it("keeps number text, so 10 and 10.0 stay apart", () => {
    const node = parseJson('{"a": 10, "b": 10.0, "c": 1e1, "d": 12345678901234567890}')!;
    expect(serializeJson(node)).toBe('{"a":10,"b":10.0,"c":1e1,"d":12345678901234567890}');
    expect(node.kind === "object" && node.entries.map((e) => e.value.kind === "number" && isFloatText(e.value.text))).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  it("rejects what is not strict JSON (repair is jsonrepair's job)", () => {
    for (const bad of ["{'a': 1}", '{"a": 1,}', "{a: 1}", '{"a": True}', '{"a": 1} x', '"\n"']) expect(parseJson(bad)).toBeNull();
  });

  it("gives a repeated key its last value at its first position, as JSON.parse does", () => {
    expect(toJsonValue(parseJson('{"a": 1, "b": 2, "a": 3}')!)).toEqual(JSON.parse('{"a": 1, "b": 2, "a": 3}'));
  });
});

describe("pythonic calls", () => {
  it("reads Python literals", () => {
    const [call] = parsePythonicCalls("f(a='x', b=\"y\", c=True, d=None, e=(1, 2), f={'k': [1.5, -2]}, g=1_000, h=.5, i=r'\\d')")!;
    expect(serializeJson({ kind: "object", entries: call!.args.map((a) => ({ key: a.key!, value: a.value })), start: -1, end: -1 })).toBe(
      '{"a":"x","b":"y","c":true,"d":null,"e":[1,2],"f":{"k":[1.5,-2]},"g":1000,"h":0.5,"i":"\\\\d"}',
    );
  });

  it("refuses anything that is not only calls", () => {
    for (const bad of ["f(a=1) and more", "x = f(a=1)", "f(a=g(1))", "f(a=b)", "print"]) expect(parsePythonicCalls(bad)).toBeNull();
  });

  it("reads a literal on its own", () => {
    expect(toJsonValue(parsePythonLiteral("['a', 1, None]")!)).toEqual(["a", 1, null]);
    expect(parsePythonLiteral("[1, 2")).toBeNull();
  });
});

describe("names and ids", () => {
  const tools = ["get_weather", "math.factorial", "search"].map((name) => ({ name, folded: foldName(name) }));
  it("matches exactly, then ignoring case and separators, then by edit distance", () => {
    expect(resolveToolName("get_weather", tools, true)!.problems).toEqual([]);
    expect(resolveToolName("math_factorial", tools, true)!.tool.name).toBe("math.factorial");
    expect(resolveToolName("GET-WEATHER", tools, true)!.problems.map((p) => p.code)).toEqual(["name_case_mismatch", "name_separator_mismatch"]);
    expect(resolveToolName("get_weathr", tools, true)!.fuzzy).toBe(true);
    expect(resolveToolName("get_weathr", tools, false)).toBeNull();
    expect(resolveToolName("book_flight", tools, true)).toBeNull();
    expect(resolveToolName("serch", tools, true)!.tool.name).toBe("search");
    expect(resolveToolName("srch", tools, true)).toBeNull();
  });

  it("ids are call_ + 24 alphanumerics, and differ", () => {
    const ids = new Set(Array.from({ length: 200 }, newCallId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });
});
