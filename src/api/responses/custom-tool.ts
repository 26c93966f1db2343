// Responses custom (freeform) tools for a model that knows only function tools: the function it is
// offered, and the freeform input read back from its call.
import type { Tool } from "../../schemas/chat-request.ts";
import type { ResponsesNestedTool } from "../../schemas/responses-request.ts";

// A custom (freeform) tool takes one string. The model sees a function with one required string
// parameter `input`; a grammar, if any, is described in words (not enforced).

/** The function the model sees for a custom tool. */
export function customToolFunction(tool: ResponsesNestedTool, chatName: string, context?: string): Tool {
  const format = tool.format;
  let description = tool.description ?? "";
  if (format?.type === "grammar" && format.definition) {
    const syntax = format.syntax === "regex" ? "regular expression" : "Lark grammar";
    description += `${description ? "\n\n" : ""}The input must match this ${syntax}:\n${format.definition}`;
  }
  if (context) description += `${description ? "\n\n" : ""}${context}`;
  return {
    type: "function",
    function: {
      name: chatName,
      ...(description ? { description } : {}),
      parameters: {
        type: "object",
        properties: { input: { type: "string", description: "The tool's whole input, as raw text." } },
        required: ["input"],
        additionalProperties: false,
      },
    },
  };
}

/** The freeform input from the model's arguments (`{"input": …}`; anything else is taken as it is). */
export function customToolInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "string") return parsed;
    if (parsed && typeof parsed === "object" && typeof (parsed as Record<string, unknown>).input === "string") {
      return (parsed as Record<string, string>).input!;
    }
  } catch {
    // not JSON: the model wrote the input itself
  }
  return args;
}

/** A custom tool call's input as the arguments the model would have written (history items). */
export function customToolArguments(input: string): string {
  return JSON.stringify({ input });
}
