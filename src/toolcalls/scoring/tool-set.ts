// The request's tools, prepared once: declared names folded for matching, parameter schemas
// normalized, validators built on first use. `tool_choice` narrows or disables the set.

import type { ArgumentValidator } from "./argument-validator.ts";
import { parametersSchema } from "./normalize-schema.ts";
import { MAX_FUZZY_NAME_CELLS } from "../../schemas/tool-limits.ts";
import { foldName, resolveToolName, type FuzzyBudget, type NameMatch } from "./resolve-tool-name.ts";
import type { JsonSchema, ToolChoice, ToolDefinition } from "./types.ts";
import { createValidator } from "./validate-arguments.ts";

export class PreparedTool {
  readonly name: string;
  readonly folded: string;
  private readonly parameters: JsonSchema | undefined;
  private normalized: JsonSchema | undefined;
  private compiled: ArgumentValidator | null | undefined;

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

  get validator(): ArgumentValidator | null {
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
    this.folded = new Set(this.tools.map((t) => t.folded));
  }

  /** The declared names folded: every `{` of prose asks whether its first key is one. */
  private readonly folded: Set<string>;

  /** No tools to call: the rewriter only splits reasoning off. */
  get enabled(): boolean {
    return this.tools.length > 0;
  }

  resolve(name: string, allowFuzzy: boolean): NameMatch<PreparedTool> | null {
    const key = `${allowFuzzy ? "~" : "="}${name}`;
    const known = this.resolved.get(key);
    if (known !== undefined) return known;
    const match = resolveToolName(name, this.tools, allowFuzzy, this.fuzzyBudget);
    this.resolved.set(key, match);
    return match;
  }

  /** Names already resolved (a model repeats its calls' names), and the request's fuzzy budget. */
  private readonly resolved = new Map<string, NameMatch<PreparedTool> | null>();
  private readonly fuzzyBudget: FuzzyBudget = { cells: MAX_FUZZY_NAME_CELLS };

  /** `key` is a declared tool's name up to case and separators (a name-as-key object). */
  isToolName(key: string): boolean {
    const folded = foldName(key);
    return folded !== "" && this.folded.has(folded);
  }

  /**
   * A word at the start of a line that may still grow into a declared tool's name. Asked of every
   * line's first word: a binary search and a look at each declared length, not a pass over every
   * tool (a line per letter against 512 tools took seconds a megabyte).
   */
  mayBecomeToolName(word: string): boolean {
    const folded = foldName(word);
    const sorted = (this.sorted ??= [...this.folded].sort());
    // The first declared name not below `folded` starts with it, if any declared name does.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < folded) lo = mid + 1;
      else hi = mid;
    }
    if (lo < sorted.length && sorted[lo]!.startsWith(folded)) return true;
    // `folded` starts with a declared name: its prefix of that name's length is one.
    this.lengths ??= new Set(sorted.map((n) => n.length));
    for (const n of this.lengths) if (n <= folded.length && this.folded.has(folded.slice(0, n))) return true;
    return false;
  }

  /** The folded names in order, and their lengths, built on the first question. */
  private sorted: string[] | undefined;
  private lengths: Set<number> | undefined;
}
