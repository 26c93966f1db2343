import { describe, expect, it } from "vitest";
import { convertResponsesRequest } from "../../../src/api/responses/convert-request.ts";
import { echoedFields } from "../../../src/api/responses/echoed-fields.ts";
import { ResponseEncoder, type ResponseStreamEvent } from "../../../src/api/responses/response-encoder.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { ResponsesRequestSchema } from "../../../src/schemas/responses-request.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";
import { codexFirstRequest } from "../../fixtures/codex/first-request.ts";

type Body = Record<string, unknown>;
const parse = (body: Body) => validateBody(ResponsesRequestSchema, { model: "m", input: "hi", ...body });
const convert = (body: Body) => convertResponsesRequest(parse(body));
const fn = (name: string, extra: Body = {}) => ({ type: "function", name, parameters: { type: "object", properties: {} }, ...extra });
const names = (body: Body) => (convert(body).chat.tools ?? []).map((t) => t.function.name);

/** Encodes the events for a request's tools; the final response and every event. */
function encode(body: Body, events: UpstreamEvent[]) {
  const converted = convert(body);
  const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "m", echo: {}, ...converted.encoding }, () => ({ target: "t", attempts: 1, ...converted.extension }));
  const out: ResponseStreamEvent[] = [...events.flatMap((e) => enc.encode(e)), ...enc.end()];
  return { out, types: out.map((e) => e.type), response: enc.response() as Record<string, any> };
}
const call = (index: number, name: string, args: string): UpstreamEvent[] => [
  { type: "toolCall", index, name, argumentsDelta: "" },
  { type: "toolCall", index, argumentsDelta: args.slice(0, 3) },
  { type: "toolCall", index, argumentsDelta: args.slice(3) },
];

describe("Codex CLI 0.171.0's first request (recorded)", () => {
  const converted = convertResponsesRequest(validateBody(ResponsesRequestSchema, structuredClone(codexFirstRequest)));

  it("is accepted: the namespace flattened, web_search dropped and reported", () => {
    expect(converted.chat.tools!.map((t) => t.function.name)).toEqual([
      "exec_command", "write_stdin", "request_user_input", "view_image",
      "close_agent", "resume_agent", "send_input", "spawn_agent", "wait_agent",
      "get_goal", "create_goal", "update_goal",
    ]);
    expect(converted.extension).toEqual({ dropped_tools: [{ index: 8, type: "web_search" }] });
    expect(converted.chat.tool_choice).toBe("auto");
    expect(converted.chat.parallel_tool_calls).toBe(true);
    const spawn = converted.chat.tools!.find((t) => t.function.name === "spawn_agent")!;
    const original = codexFirstRequest.tools[4]!.tools!.find((t) => t.name === "spawn_agent")!;
    expect(spawn.function.parameters).toEqual(original.parameters);
    expect(spawn.function.description).toContain("(multi_agent_v1: Tools for spawning and managing sub-agents.)");
  });

  it("developer messages become system messages; Responses-only fields are not forwarded", () => {
    expect(converted.chat.messages.map((m) => m.role)).toEqual(["system", "system", "user", "user"]);
    expect(converted.chat.messages[3]!.content).toBe("create hello.txt");
    for (const key of ["client_metadata", "prompt_cache_key", "include", "reasoning", "store", "input"]) expect(converted.chat).not.toHaveProperty(key);
    expect(converted.chat.stream).toBe(true);
  });

  it("echoes the tools exactly as sent", () => {
    const request = validateBody(ResponsesRequestSchema, structuredClone(codexFirstRequest));
    expect(echoedFields(request).tools).toEqual(codexFirstRequest.tools);
    expect(echoedFields(request).reasoning).toEqual({ effort: null, summary: "auto" });
  });

  it("a call of a namespaced tool comes back with its namespace", () => {
    const { response } = encode(structuredClone(codexFirstRequest) as Body, [...call(0, "spawn_agent", '{"message":"go"}'), { type: "finish", reason: "tool_calls" }]);
    expect(response.output).toEqual([
      { id: expect.stringMatching(/^fc_/), type: "function_call", status: "completed", call_id: expect.stringMatching(/^call_/), name: "spawn_agent", namespace: "multi_agent_v1", arguments: '{"message":"go"}' },
    ]);
    expect(response.x_switchyard.dropped_tools).toEqual([{ index: 8, type: "web_search" }]);
  });
});

describe("namespace tools", () => {
  const tools = [
    fn("send"),
    { type: "namespace", name: "mail", description: "Mail tools.", tools: [fn("send", { description: "Send mail." }), fn("read")] },
    { type: "namespace", name: "chat", description: "Chat tools.", tools: [fn("send")] },
  ];

  it("inner names stay as they are unless another tool has the name: then <namespace>__<name>", () => {
    expect(names({ tools })).toEqual(["send", "mail__send", "read", "chat__send"]);
    expect(convert({ tools }).chat.tools![1]!.function.description).toBe("Send mail.\n\n(mail: Mail tools.)");
  });

  it("calls map back to the inner name and the namespace, in the stream and the final object", () => {
    const { out, response } = encode({ tools }, [...call(0, "mail__send", '{"to":"a"}'), ...call(1, "read", "{}"), ...call(2, "send", "{}"), { type: "finish", reason: "tool_calls" }]);
    const added = out.filter((e) => e.type === "response.output_item.added").map((e) => e.item);
    expect(added.map((i: any) => [i.type, i.name, i.namespace, i.status])).toEqual([
      ["function_call", "send", "mail", "in_progress"],
      ["function_call", "read", "mail", "in_progress"],
      ["function_call", "send", undefined, "in_progress"],
    ]);
    expect(out.find((e) => e.type === "response.function_call_arguments.done")).toMatchObject({ name: "send", arguments: '{"to":"a"}' });
    expect(response.output.map((i: any) => [i.name, i.namespace ?? null, i.arguments])).toEqual([
      ["send", "mail", '{"to":"a"}'],
      ["read", "mail", "{}"],
      ["send", null, "{}"],
    ]);
  });

  it("history function_call items with a namespace reach the model under the flattened name", () => {
    const chat = convert({
      tools,
      input: [
        { role: "user", content: "mail bob" },
        { type: "function_call", call_id: "c1", name: "send", namespace: "mail", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "read", namespace: "mail", arguments: "{}" },
        { type: "function_call", call_id: "c3", name: "send", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "sent" },
      ],
    }).chat;
    expect(chat.messages[1]!.tool_calls!.map((c) => c.function.name)).toEqual(["mail__send", "read", "send"]);
  });
});

describe("hosted tools", () => {
  const hosted = [
    { type: "web_search", external_web_access: true },
    { type: "web_search_preview" },
    { type: "file_search", vector_store_ids: ["vs_1"] },
    { type: "code_interpreter", container: { type: "auto" } },
    { type: "image_generation" },
    { type: "computer_use_preview", display_width: 1, display_height: 1, environment: "linux" },
    { type: "computer" },
    { type: "mcp", server_label: "x", server_url: "https://example.invalid" },
    { type: "tool_search" },
    { type: "apply_patch" },
    { type: "shell" },
    { type: "some_future_tool" },
  ];

  it("are left out of what the model sees, and listed by index and type", () => {
    const converted = convert({ tools: [fn("a"), ...hosted] });
    expect(converted.chat.tools!.map((t) => t.function.name)).toEqual(["a"]);
    expect(converted.extension.dropped_tools).toEqual(hosted.map((t, i) => ({ index: i + 1, type: t.type })));
    expect(convert({ tools: [fn("a")] }).extension).toEqual({});
  });

  it("a tool_choice naming one becomes auto; with no tools left neither is sent", () => {
    expect(convert({ tools: [fn("a"), ...hosted], tool_choice: { type: "web_search_preview" } }).chat.tool_choice).toBe("auto");
    expect(convert({ tools: [fn("a"), ...hosted], tool_choice: { type: "mcp", server_label: "x" } }).chat.tool_choice).toBe("auto");
    const none = convert({ tools: hosted, tool_choice: "required" }).chat;
    expect(none.tools).toBeUndefined();
    expect(none.tool_choice).toBeUndefined();
  });

  it("allowed_tools becomes its mode over just those tools", () => {
    const tools = [fn("a"), fn("b"), { type: "custom", name: "patch" }, { type: "local_shell" }, { type: "namespace", name: "ns", description: "", tools: [fn("c")] }, ...hosted];
    const allowed = (list: Body[], mode = "required") => convert({ tools, tool_choice: { type: "allowed_tools", mode, tools: list } }).chat;
    const chat = allowed([{ type: "function", name: "b" }, { type: "custom", name: "patch" }, { type: "web_search" }]);
    expect(chat.tools!.map((t) => t.function.name)).toEqual(["b", "patch"]);
    expect(chat.tool_choice).toBe("required");
    expect(allowed([{ type: "namespace", name: "ns" }, { type: "local_shell" }], "auto").tools!.map((t) => t.function.name)).toEqual(["local_shell", "c"]);
    expect(allowed([{ type: "function", name: "c", namespace: "ns" }], "auto").tool_choice).toBe("auto");
  });

  it("a custom tool_choice picks that function", () => {
    expect(convert({ tools: [fn("a"), { type: "custom", name: "patch" }], tool_choice: { type: "custom", name: "patch" } }).chat.tool_choice).toEqual({
      type: "function",
      function: { name: "patch" },
    });
  });
});

describe("local_shell", () => {
  const tools = [{ type: "local_shell" }];

  it("is offered as a function taking the argv list", () => {
    const [tool] = convert({ tools }).chat.tools!;
    expect(tool!.function.name).toBe("local_shell");
    expect(tool!.function.parameters).toMatchObject({
      type: "object",
      properties: { command: { type: "array", items: { type: "string" } }, workdir: { type: "string" }, timeout_ms: { type: "integer" } },
      required: ["command"],
    });
  });

  it("a call comes back whole as a local_shell_call item with an exec action", () => {
    const args = '{"command":["ls","-la"],"workdir":"/tmp","timeout_ms":5000}';
    const { out, types, response } = encode({ tools }, [{ type: "text", delta: "Listing." }, ...call(0, "local_shell", args), { type: "finish", reason: "tool_calls" }]);
    const item = {
      id: expect.stringMatching(/^lsh_/),
      type: "local_shell_call",
      status: "completed",
      call_id: expect.stringMatching(/^call_/),
      action: { type: "exec", command: ["ls", "-la"], timeout_ms: 5000, working_directory: "/tmp", env: {}, user: null },
    };
    expect(types.slice(-3)).toEqual(["response.output_item.added", "response.output_item.done", "response.completed"]);
    expect(types).not.toContain("response.function_call_arguments.delta");
    expect(out.at(-3)).toMatchObject({ output_index: 1, item: { ...item, status: "in_progress" } });
    expect(out.at(-2)).toMatchObject({ output_index: 1, item });
    expect(response.output[1]).toEqual(item);
  });

  it("a command written as one string runs in bash -lc; missing options are null", () => {
    const { response } = encode({ tools }, [...call(0, "local_shell", '{"command":"echo hi > a.txt"}'), { type: "finish", reason: "tool_calls" }]);
    expect(response.output[0].action).toEqual({ type: "exec", command: ["bash", "-lc", "echo hi > a.txt"], timeout_ms: null, working_directory: null, env: {}, user: null });
  });

  it("history local_shell_call and its output become an assistant tool call and a tool message", () => {
    const chat = convert({
      tools,
      input: [
        { role: "user", content: "list" },
        { type: "local_shell_call", id: "lsh_1", call_id: "call_1", status: "completed", action: { type: "exec", command: ["ls"], working_directory: "/w", timeout_ms: 10, env: {}, user: null } },
        { type: "local_shell_call_output", id: "call_1", output: '{"output":"a.txt"}' },
      ],
    }).chat;
    expect(chat.messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "local_shell", arguments: '{"command":["ls"],"workdir":"/w","timeout_ms":10}' } }] },
      { role: "tool", tool_call_id: "call_1", content: '{"output":"a.txt"}' },
    ]);
  });
});

describe("custom tools", () => {
  const grammar = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"';
  const tools = [{ type: "custom", name: "apply_patch", description: "Edit files.", format: { type: "grammar", syntax: "lark", definition: grammar } }, { type: "custom", name: "note" }];

  it("are offered as a function with one required string `input`, the grammar in the description", () => {
    const [patch, note] = convert({ tools }).chat.tools!;
    expect(patch!.function).toEqual({
      name: "apply_patch",
      description: `Edit files.\n\nThe input must match this Lark grammar:\n${grammar}`,
      parameters: { type: "object", properties: { input: { type: "string", description: expect.any(String) } }, required: ["input"], additionalProperties: false },
    });
    expect(note!.function.description).toBeUndefined();
  });

  it("a call comes back whole as a custom_tool_call with input deltas and done", () => {
    const patch = "*** Begin Patch\n+hi\n*** End Patch";
    const { out, types, response } = encode({ tools }, [...call(0, "apply_patch", JSON.stringify({ input: patch })), { type: "finish", reason: "tool_calls" }]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const id = (out[2]!.item as { id: string }).id;
    expect(id).toMatch(/^ctc_/);
    expect(out[2]).toMatchObject({ output_index: 0, item: { type: "custom_tool_call", status: "in_progress", name: "apply_patch", input: "" } });
    expect(out[3]).toMatchObject({ item_id: id, output_index: 0, delta: patch });
    expect(out[4]).toMatchObject({ item_id: id, output_index: 0, input: patch });
    expect(response.output).toEqual([{ id, type: "custom_tool_call", status: "completed", call_id: expect.stringMatching(/^call_/), name: "apply_patch", input: patch }]);
  });

  it("arguments that are not {input} are taken as the input itself", () => {
    const { response } = encode({ tools }, [...call(0, "note", "remember milk"), { type: "finish", reason: "tool_calls" }]);
    expect(response.output[0]).toMatchObject({ type: "custom_tool_call", input: "remember milk" });
  });

  it("inside a namespace they carry the namespace back", () => {
    const { response } = encode({ tools: [{ type: "namespace", name: "ed", description: "", tools: [{ type: "custom", name: "write" }] }] }, [
      ...call(0, "write", '{"input":"x"}'),
      { type: "finish", reason: "tool_calls" },
    ]);
    expect(response.output[0]).toMatchObject({ type: "custom_tool_call", name: "write", namespace: "ed", input: "x" });
  });

  it("history custom_tool_call and its output become a tool call with {input} and a tool message", () => {
    const chat = convert({
      tools,
      input: [
        { role: "user", content: "patch" },
        { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch" },
        { type: "custom_tool_call_output", call_id: "call_p", output: [{ type: "input_text", text: "Done!" }] },
      ],
    }).chat;
    expect(chat.messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_p", type: "function", function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' } }] },
      { role: "tool", tool_call_id: "call_p", content: "Done!" },
    ]);
  });

  it("function calls still stream their arguments next to them", () => {
    const { types } = encode({ tools: [...tools, fn("f")] }, [...call(0, "f", '{"a":1}'), ...call(1, "note", '{"input":"n"}'), { type: "finish", reason: "tool_calls" }]);
    expect(types.slice(2)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });
});
