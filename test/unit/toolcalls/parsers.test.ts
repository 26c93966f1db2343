import { describe, expect, it } from "vitest";
import { isFloatText, parseJson, rewriteToolCalls, toJsonValue } from "./imports.ts";
import { parsePythonicCalls } from "../../../src/toolcalls/dialects/pythonic.ts";
import { parsePythonLiteral } from "../../../src/toolcalls/json/python-literal.ts";
import { serializeJson } from "../../../src/toolcalls/json/json-node.ts";
import { resolveToolName, foldName } from "../../../src/toolcalls/scoring/resolve-tool-name.ts";
import { newCallId } from "../../../src/toolcalls/scoring/call-id.ts";

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

describe("text-dialect values", () => {
  const tool = (properties: Record<string, unknown>) => [
    { type: "function" as const, function: { name: "f", parameters: { type: "object", properties } } },
  ];
  const args = (tools: ReturnType<typeof tool>, text: string) =>
    JSON.parse(rewriteToolCalls({ tools, text }).tool_calls[0]!.function.arguments);

  it("drops Qwen3-Coder's newlines around a value and keeps Seed-OSS's value as written", () => {
    const tools = tool({ code: { type: "string" } });
    const qwen = "<tool_call>\n<function=f>\n<parameter=code>\nx = 1\n\n</parameter>\n</function>\n</tool_call>";
    const seed = "<seed:tool_call>\n<function=f>\n<parameter=code>x = 1\n</parameter>\n</function>\n</seed:tool_call>";
    expect(args(tools, qwen)).toEqual({ code: "x = 1\n" });
    expect(args(tools, seed)).toEqual({ code: "x = 1\n" });
  });

  it("reads MiniMax-M3's element trees by the schema; a string parameter keeps its inner text", () => {
    const tools = tool({
      point: { type: "object", properties: { x: { type: "number" }, tags: { type: "array", items: { type: "string" } } } },
      label: { oneOf: [{ type: "string" }, { type: "object" }] },
    });
    const ns = "]<]minimax[>[";
    const tags = `${ns}<tags>${ns}<item>a${ns}</item>${ns}<item>b${ns}</item>${ns}</tags>`;
    const point = `${ns}<point>${ns}<x>1.5${ns}</x>${tags}${ns}</point>`;
    const label = `${ns}<label>${ns}<b>hi${ns}</b>${ns}</label>`;
    const text = `${ns}<tool_call>\n${ns}<invoke name="f">${point}${label}${ns}</invoke>\n${ns}</tool_call>`;
    expect(args(tools, text)).toEqual({ point: { x: 1.5, tags: ["a", "b"] }, label: `${ns}<b>hi${ns}</b>` });
  });

  it("keeps a MiniCPM 5 CDATA value verbatim, a </param> inside it included", () => {
    const tools = tool({ markup: { type: "string" } });
    const text = '<function name="f"><param name="markup"><![CDATA[<a>x</a> </param>]]></param></function>';
    expect(args(tools, text)).toEqual({ markup: "<a>x</a> </param>" });
  });

  it("reads DSML's string=\"false\" values as JSON", () => {
    const tools = tool({ n: { type: "integer" }, any: {} });
    const p = (k: string, s: string, v: string) => `<｜DSML｜parameter name="${k}" string="${s}">${v}</｜DSML｜parameter>\n`;
    const invoke = `<｜DSML｜invoke name="f">\n${p("n", "false", "-14")}${p("any", "true", "42")}</｜DSML｜invoke>\n`;
    const text = `<｜DSML｜tool_calls>\n${invoke}</｜DSML｜tool_calls>`;
    expect(args(tools, text)).toEqual({ n: -14, any: "42" });
  });
});
