// Tools and one recorded sample per dialect (reference §1), named after the model family that
// writes it. Each sample lists the calls it must give.

import type { ToolDefinition } from "../../../src/toolcalls/index.ts";

export const TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city.",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string" },
          days: { type: "integer" },
          metric: { type: "boolean" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["city"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "get_time",
      parameters: { type: "object", properties: { tz: { type: "string" } }, required: ["tz"] },
    },
  },
  {
    type: "function",
    function: {
      name: "math_factorial",
      parameters: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
    },
  },
  {
    type: "function",
    function: {
      name: "brave_search",
      parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    },
  },
];

export interface Sample {
  text: string;
  calls: Array<[name: string, args: Record<string, unknown>]>;
  content?: string | null;
  reasoning?: string;
}

const PARIS: [string, Record<string, unknown>] = ["get_weather", { city: "Paris" }];
const CET: [string, Record<string, unknown>] = ["get_time", { tz: "CET" }];

export const DIALECT_SAMPLES: Record<string, Sample> = {
  "hermes-qwen-tool_call": {
    text: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    calls: [PARIS],
  },
  "hermes-parallel-blocks": {
    text: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>',
    calls: [PARIS, CET],
  },
  "llama3-json-parameters": { text: '{"name": "get_weather", "parameters": {"city": "Paris"}}', calls: [PARIS] },
  "llama3-json-semicolon-joined": {
    text: '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {"tz": "CET"}}',
    calls: [PARIS, CET],
  },
  "llama3-typed-json": { text: '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}', calls: [PARIS] },
  "llama3-python-tag-json": { text: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}', calls: [PARIS] },
  "llama31-builtin-call": {
    text: '<|python_tag|>brave_search.call(query="weather Paris")<|eom_id|>',
    calls: [["brave_search", { query: "weather Paris" }]],
  },
  "functionary-v31-function-eq": { text: '<function=get_weather>{"city": "Paris"}</function>', calls: [PARIS] },
  "function-name-attribute": { text: '<function name="get_weather">{"city": "Paris"}</function>', calls: [PARIS] },
  "functionary-v32": { text: '>>>get_weather\n{"city": "Paris"}>>>get_time\n{"tz": "CET"}', calls: [PARIS, CET] },
  "functionary-v32-first-without-marker": { text: 'get_weather\n{"city": "Paris"}', calls: [PARIS] },
  "functionary-v32-all-channel": { text: ">>>all\nIt is sunny.", calls: [], content: "It is sunny." },
  "mistral-json-array": {
    text: '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "aB3dE5gH7"}]',
    calls: [PARIS],
  },
  "mistral-v11-args": { text: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', calls: [PARIS] },
  "mistral-v11-call-id": {
    text: '[TOOL_CALLS]get_weather[CALL_ID]aB3dE5gH7[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"tz": "CET"}',
    calls: [PARIS, CET],
  },
  "mistral-v11-bare-name": { text: '[TOOL_CALLS]get_weather{"city": "Paris"}', calls: [PARIS] },
  "firefunction-functools": { text: ' functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]', calls: [PARIS] },
  "pythonic-list": { text: "[get_weather(city='Paris'), get_time(tz=\"CET\")]", calls: [PARIS, CET] },
  "pythonic-single-dotted": { text: "math.factorial(number=5)", calls: [["math_factorial", { number: 5 }]] },
  "pythonic-python-literals": {
    text: "[get_weather(city='Paris', days=3, metric=True, unit=\"celsius\")]",
    calls: [["get_weather", { city: "Paris", days: 3, metric: true, unit: "celsius" }]],
  },
  "llama4-python-start": { text: '<|python_start|>[get_weather(city="Paris")]<|python_end|>', calls: [PARIS] },
  "lfm2-tool-call-start": { text: '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>', calls: [PARIS] },
  "granite-tool-call-token": { text: '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]', calls: [PARIS] },
  "granite-20b-function-call": {
    text: '<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}} {"name": "get_time", "arguments": {"tz": "CET"}}',
    calls: [PARIS, CET],
  },
  "jamba-tool-calls-tag": { text: '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>', calls: [PARIS] },
  "minimax-m1-newline-objects": {
    text: '<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_calls>',
    calls: [PARIS, CET],
  },
  "nemotron-toolcall-tag": { text: '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>', calls: [PARIS] },
  "apertus-tools-prefix": { text: '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>', calls: [PARIS] },
  "internlm2-action": {
    text: '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>',
    calls: [PARIS],
  },
  "deepseek-v3-fenced": {
    text: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    calls: [PARIS],
  },
  "deepseek-v31": {
    text: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"tz": "CET"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    calls: [PARIS, CET],
  },
  "deepseek-misspelled-markers": {
    text: '<｜tool_calls_begin｜><｜tool_call_begin｜>get_weather<｜tool_sep｜>{"city": "Paris"}<｜tool_call_end｜><｜tool_calls_end｜>',
    calls: [PARIS],
  },
  "kimi-k2": {
    text: '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    calls: [PARIS],
  },
  "qwen3-coder-xml": {
    text: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n5\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>",
    calls: [["get_weather", { city: "Paris", days: 5, metric: true }]],
  },
  "seed-oss-xml": {
    text: "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
    calls: [PARIS],
  },
  "glm45-arg-key": {
    text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
    calls: [["get_weather", { city: "Paris", days: 2 }]],
  },
  "minimax-m2-invoke": {
    text: '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n<invoke name="get_time">\n<parameter name="tz">CET</parameter>\n</invoke>\n</minimax:tool_call>',
    calls: [PARIS, CET],
  },
  "deepseek-v32-dsml": {
    text: '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    calls: [["get_weather", { city: "Paris", days: 3 }]],
  },
  "deepseek-v4-dsml": {
    text: '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="get_time">\n<｜DSML｜parameter name="tz" string="true">CET</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
    calls: [PARIS, CET],
  },
  "minimax-m3-namespaced": {
    text: ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="get_weather">]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<days>3]<]minimax[>[</days>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>',
    calls: [["get_weather", { city: "Paris", days: 3 }]],
  },
  "minicpm5-param-cdata": {
    text: '<function name="get_weather"><param name="city">Paris</param><param name="days">3</param></function>\n<function name="get_time"><param name="tz"><![CDATA[CET]]></param></function>',
    calls: [["get_weather", { city: "Paris", days: 3 }], CET],
  },
  "muse-glimmer-atem": {
    text: '<atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
    calls: [PARIS],
  },
  "hunyuan-v3-opensource-tags": {
    text: "<think:opensource>Weather.</think:opensource><tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>3</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
    calls: [["get_weather", { city: "Paris", days: 3 }]],
    reasoning: "Weather.",
  },
  "solar-open-tool-calls": {
    text: '<|think|>Weather.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"}<|tool_call:end|><|tool_call:begin|>f6g7h8i9j0<|tool_call:name|>get_time<|tool_call:args|>{"tz": "CET"}<|tool_call:end|><|calls|>',
    calls: [PARIS, CET],
    reasoning: "Weather.",
  },
  "kimi-k3-tools": {
    text: '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
    calls: [["get_weather", { city: "Paris", days: 3 }]],
  },
  "gigachat3-function-call-message": {
    text: '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
    calls: [PARIS],
  },
  "gigachat31-function-call-token": { text: '<|function_call|>{"name": "get_weather", "arguments": {"city": "Paris"}}', calls: [PARIS] },
  "gpt-oss-harmony-channel-recipient": {
    text: '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
    calls: [PARIS],
  },
  "gpt-oss-harmony-role-recipient": {
    text: '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
    calls: [PARIS],
    reasoning: "Need the weather.",
  },
  "gpt-oss-harmony-final": { text: "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>", calls: [], content: "Sunny." },
  "command-r7b-action": {
    text: '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>',
    calls: [PARIS],
    reasoning: "plan",
  },
  "command-r-plus-action-fence": {
    text: 'Action: ```json\n[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]\n```',
    calls: [PARIS],
  },
  "gemma4-tool-call": {
    text: '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>',
    calls: [["get_weather", { city: "Paris", days: 3 }]],
  },
  "functiongemma-escape": {
    text: "<start_function_call>call:get_weather{city:<escape>Paris<escape>,days:3}<end_function_call>",
    calls: [["get_weather", { city: "Paris", days: 3 }]],
  },
  "olmo3-function-calls": {
    text: '<function_calls>\nget_weather(city="Paris")\nget_time(tz="CET")\n</function_calls>',
    calls: [PARIS, ["get_time", { tz: "CET" }]],
  },
  "localai-function-key": { text: '{"function": "get_weather", "arguments": {"city": "Paris"}}', calls: [PARIS] },
  "openai-typed-string-arguments": {
    text: '{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}',
    calls: [PARIS],
  },
  "openai-flat-string-arguments": { text: '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}', calls: [PARIS] },
  "generic-tool-call-wrapper": { text: '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}', calls: [PARIS] },
  "generic-tool-calls-wrapper": {
    text: '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call1"}, {"name": "get_time", "arguments": {"tz": "CET"}, "id": "call2"}]}',
    calls: [PARIS, CET],
  },
  "generic-response-wrapper": { text: '{"response": "It is sunny in Paris."}', calls: [], content: "It is sunny in Paris." },
  "localai-answer-pseudo-tool": { text: '{"name": "answer", "arguments": {"message": "It is sunny."}}', calls: [], content: "It is sunny." },
  "xlam-bare-array": {
    text: '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]',
    calls: [PARIS, CET],
  },
  "name-as-key": { text: '{"get_weather": {"city": "Paris"}}', calls: [PARIS] },
  "json-code-fence": { text: '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', calls: [PARIS] },
  "tool-code-fence": { text: '```tool_code\nget_weather(city="Paris")\n```', calls: [PARIS] },
  "python-fence-two-lines": { text: '```python\nget_weather(city="Paris")\nget_time(tz="CET")\n```', calls: [PARIS, CET] },
  "after-prose": {
    text: 'Sure! <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> Anything else?',
    calls: [PARIS],
    content: "Sure! Anything else?",
  },
  "after-think-block": {
    text: '<think>\nThe user wants weather.\n</think>\n\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    calls: [PARIS],
    reasoning: "The user wants weather.",
  },
  "magistral-think": {
    text: '[THINK]Weather, then.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    calls: [PARIS],
    reasoning: "Weather, then.",
  },
  "seed-think": {
    text: '<seed:think>Weather.</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>',
    calls: [PARIS],
    reasoning: "Weather.",
  },
  "pythonic-line-after-prose": {
    text: 'Let me check.\n[get_weather(city="Paris")]\nDone.',
    calls: [PARIS],
    content: "Let me check.\nDone.",
  },
};
