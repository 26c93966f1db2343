// The Responses `local_shell` tool for a model that knows only function tools: the function it is
// offered, and its calls as the `exec` actions the client runs.
import type { Tool } from "../../schemas/chat-request.ts";
import { LOCAL_SHELL_NAME } from "./tool-origin.ts";

// The `local_shell` tool: the model sees a function taking the command as an argv list; its calls
// go back to the client as `local_shell_call` items with an `exec` action.

export const localShellFunction: Tool = {
  type: "function",
  function: {
    name: LOCAL_SHELL_NAME,
    description: 'Runs a command on the user\'s machine and returns its output. `command` is the argument vector, e.g. ["bash", "-lc", "ls -la"].',
    parameters: {
      type: "object",
      properties: {
        command: { type: "array", items: { type: "string" }, description: "The program and its arguments." },
        workdir: { type: "string", description: "The working directory to run it in." },
        timeout_ms: { type: "integer", description: "Stop the command after this many milliseconds." },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
};

export interface LocalShellAction {
  type: "exec";
  command: string[];
  timeout_ms: number | null;
  working_directory: string | null;
  env: Record<string, string>;
  user: string | null;
}

/** The `exec` action from the model's arguments; a command given as one string runs in `bash -lc`. */
export function localShellAction(args: string): LocalShellAction {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(args);
    if (value && typeof value === "object" && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // unreadable arguments: an empty command, which the client reports back as a failure
  }
  const command = parsed.command;
  const argv = Array.isArray(command) ? command.map(String) : typeof command === "string" ? ["bash", "-lc", command] : [];
  const timeout = parsed.timeout_ms;
  const workdir = parsed.workdir ?? parsed.working_directory;
  return {
    type: "exec",
    command: argv,
    timeout_ms: typeof timeout === "number" && Number.isFinite(timeout) ? Math.round(timeout) : null,
    working_directory: typeof workdir === "string" ? workdir : null,
    env: {},
    user: null,
  };
}

/** A `local_shell_call`'s action as the arguments the model would have written (history items). */
export function localShellArguments(action: Record<string, unknown> | null | undefined): string {
  const a = action ?? {};
  return JSON.stringify({
    command: Array.isArray(a.command) ? a.command : [],
    ...(typeof a.working_directory === "string" ? { workdir: a.working_directory } : {}),
    ...(typeof a.timeout_ms === "number" ? { timeout_ms: a.timeout_ms } : {}),
  });
}
