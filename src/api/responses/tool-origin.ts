/**
 * Which of the client's tools a name the model sees stands for: a function or custom tool (maybe
 * from a `namespace` entry), or the `local_shell` tool.
 */
export type ToolOrigin =
  | { kind: "function"; name: string; namespace?: string }
  | { kind: "custom"; name: string; namespace?: string }
  | { kind: "local_shell" };

/** A tool left out of what the model sees, reported in `x_switchyard.dropped_tools`. */
export interface DroppedTool {
  /** Its index in the request's `tools`. */
  index: number;
  type: string;
  /** Set when the tool was inside a `namespace` entry. */
  namespace?: string;
}

/** The model's tool names, both ways. */
export interface ToolNames {
  /** The client tool a name the model called stands for (a function of that name if none). */
  origin(chatName: string): ToolOrigin;
  /** The name the model sees for a client tool (for history items). */
  chatName(origin: ToolOrigin): string;
}

export const LOCAL_SHELL_NAME = "local_shell";

/** Names for a request without namespaces, custom tools or local_shell: every name is itself. */
export const plainToolNames: ToolNames = {
  origin: (name) => ({ kind: "function", name }),
  chatName: (o) => (o.kind === "local_shell" ? LOCAL_SHELL_NAME : o.name),
};
