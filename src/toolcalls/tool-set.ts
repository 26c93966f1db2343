// The request's tools, prepared once: declared names folded for matching, parameter schemas
// normalized, validators built on first use. `tool_choice` narrows or disables the set.

import type { Validator } from "@cfworker/json-schema";
import { parametersSchema } from "./normalize-schema.ts";
import { foldName, resolveToolName, type NameMatch } from "./resolve-tool-name.ts";
import type { JsonSchema, ToolChoice, ToolDefinition } from "./types.ts";
import { createValidator } from "./validate-arguments.ts";

export class PreparedTool {
  readonly name: string;
  readonly folded: string;
  private readonly parameters: JsonSchema | undefined;
  private normalized: JsonSchema | undefined;
  private compiled: Validator | null | undefined;

  constructor(name: string, parameters: JsonSchema | undefined) {
    this.name = name;
    this.folded = foldName(name);
    this.parameters = parameters;
  }

  /** Normalized on first use: most declared tools are never called. */
  get schema(): JsonSchema {
    if (this.normalized === undefined) this.normalized = parametersSchema(this.parameters);
    return this.normalized;
  }

  get validator(): Validator | null {
    if (this.compiled === undefined) this.compiled = createValidator(this.schema);
    return this.compiled;
  }
}

export class ToolSet {
  readonly tools: PreparedTool[];

  constructor(tools: readonly ToolDefinition[], choice?: ToolChoice) {
    let declared = tools.filter((t) => t && t.type === "function" && typeof t.function?.name === "string");
    if (choice === "none") declared = [];
    else if (typeof choice === "object" && choice !== null) {
      declared = declared.filter((t) => t.function.name === choice.function.name);
    }
    this.tools = declared.map((t) => new PreparedTool(t.function.name, t.function.parameters));
  }

  /** No tools to call: the rewriter only splits reasoning off. */
  get enabled(): boolean {
    return this.tools.length > 0;
  }

  resolve(name: string, allowFuzzy: boolean): NameMatch<PreparedTool> | null {
    return resolveToolName(name, this.tools, allowFuzzy);
  }

  /** `key` is a declared tool's name up to case and separators (a name-as-key object). */
  isToolName(key: string): boolean {
    const folded = foldName(key);
    return folded !== "" && this.tools.some((t) => t.folded === folded);
  }

  /** A word at the start of a line that may still grow into a declared tool's name. */
  mayBecomeToolName(word: string): boolean {
    const folded = foldName(word);
    return this.tools.some((t) => t.folded.startsWith(folded) || folded.startsWith(t.folded));
  }
}
