// The coding-agent clients, each configured for a custom endpoint the way its documentation says
// (reference agent-clients.md) and otherwise on its defaults, run once on a task in a sandbox from
// agent-client.mjs. Each `run*` resolves to { run, answer, succeeded }: the process's result (or, for
// the in-process SDK, a stand-in), the agent's final answer as the client reports it, and whether
// the client says it succeeded (exit 0, or its JSON result's status).
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, runClient } from "./agent-client.mjs";

export const PROMPT = "Use your shell tool to run a command that writes agent-proof.txt in the current directory and prints it. Then tell me what the file says.";

/** Keys are not needed in dev open mode; clients that insist on one get this. */
const API_KEY = "sk-switchyard-dev";

/**
 * What every `run*` gets: Switchyard's base URL (no /v1), the model, the sandbox, the time limit.
 * @typedef {{ base: string, model: string, sandbox: import("./agent-client.mjs").Sandbox, timeoutMs: number }} AgentRunOptions
 * @typedef {{ run: import("./agent-client.mjs").ClientRun, answer: string | null, succeeded: boolean }} AgentOutcome
 */

/**
 * Codex CLI, `codex exec`, on either of its two paths (reference agent-clients.md):
 * - `custom` (the default): CODEX_HOME/config.toml with a Responses-API model provider, the key from
 *   SWITCHYARD_API_KEY; `websockets: true` adds `supports_websockets = true` to it;
 * - `builtin`: the built-in `openai` provider pointed at Switchyard with `openai_base_url`, the key
 *   from CODEX_API_KEY (the only variable it reads on this path). It opens the Responses WebSocket
 *   first, and compacts with compaction_trigger (v2).
 * `settings`: more top-level config.toml keys (e.g. `model_auto_compact_token_limit`), values as TOML
 * literals written with JSON.stringify (strings, numbers, booleans).
 * @param {AgentRunOptions & { provider?: "custom" | "builtin", websockets?: boolean, settings?: Record<string, string | number | boolean> }} options
 * @returns {Promise<AgentOutcome>}
 */
export async function runCodex({ base, model, sandbox, timeoutMs, provider = "custom", websockets = false, settings = {} }) {
  const codexHome = join(sandbox.home, ".codex");
  const lastMessage = join(sandbox.root, "last-message.txt");
  mkdirSync(codexHome, { recursive: true });
  const common = [`model = ${JSON.stringify(model)}`, ...Object.entries(settings).map(([k, v]) => `${k} = ${JSON.stringify(v)}`)];
  const config =
    provider === "builtin"
      ? [...common, `openai_base_url = ${JSON.stringify(`${base}/v1`)}`]
      : [
          ...common,
          `model_provider = "switchyard"`,
          "",
          "[model_providers.switchyard]",
          `name = "Switchyard"`,
          `base_url = ${JSON.stringify(`${base}/v1`)}`,
          `wire_api = "responses"`,
          `env_key = "SWITCHYARD_API_KEY"`,
          ...(websockets ? ["supports_websockets = true"] : []),
        ];
  writeFileSync(join(codexHome, "config.toml"), [...config, ""].join("\n"));
  const key = provider === "builtin" ? { CODEX_API_KEY: API_KEY } : { SWITCHYARD_API_KEY: API_KEY };
  const run = await runClient(join(BIN, "codex"), ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", model, "-o", lastMessage, PROMPT], {
    cwd: sandbox.work,
    env: { ...sandbox.env, CODEX_HOME: codexHome, ...key, RUST_LOG: "warn" },
    timeoutMs,
  });
  const answer = existsSync(lastMessage) ? readFileSync(lastMessage, "utf8") : null;
  return { run, answer, succeeded: run.code === 0 };
}

/**
 * Claude Code: the ANTHROPIC_* environment, every model slot set to `model`; `claude -p --output-format json`.
 * @param {AgentRunOptions} options
 * @returns {Promise<AgentOutcome>}
 */
export async function runClaude({ base, model, sandbox, timeoutMs }) {
  const run = await runClient(join(BIN, "claude"), ["-p", PROMPT, "--dangerously-skip-permissions", "--output-format", "json"], {
    cwd: sandbox.work,
    env: {
      ...sandbox.env,
      ANTHROPIC_BASE_URL: base,
      ANTHROPIC_API_KEY: API_KEY,
      ANTHROPIC_MODEL: model,
      ANTHROPIC_SMALL_FAST_MODEL: model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: model,
      CLAUDE_CODE_SUBAGENT_MODEL: model,
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      IS_SANDBOX: "1",
    },
    timeoutMs,
  });
  const result = lastJson(run.stdout);
  return { run, answer: typeof result?.result === "string" ? result.result : null, succeeded: run.code === 0 && result?.is_error === false && result?.subtype === "success" };
}

/**
 * opencode: opencode.json in the working directory with an @ai-sdk/openai-compatible provider; `opencode run`.
 * @param {AgentRunOptions} options
 * @returns {Promise<AgentOutcome>}
 */
export async function runOpencode({ base, model, sandbox, timeoutMs }) {
  writeFileSync(
    join(sandbox.work, "opencode.json"),
    JSON.stringify(
      {
        provider: { switchyard: { npm: "@ai-sdk/openai-compatible", name: "Switchyard", options: { baseURL: `${base}/v1`, apiKey: API_KEY }, models: { [model]: { name: model, tool_call: true } } } },
        autoupdate: false,
        share: "disabled",
      },
      null,
      2,
    ),
  );
  const run = await runClient(join(BIN, "opencode"), ["run", "--auto", "-m", `switchyard/${model}`, "--format", "json", PROMPT], {
    cwd: sandbox.work,
    env: { ...sandbox.env, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" },
    timeoutMs,
  });
  const events = jsonLines(run.stdout);
  const texts = events.filter((e) => e.type === "text" && typeof e.part?.text === "string").map((e) => e.part.text);
  const errors = events.filter((e) => e.type === "error");
  return { run, answer: texts.length ? texts.join("\n") : null, succeeded: run.code === 0 && errors.length === 0 };
}

/**
 * Qwen Code in one of its auth modes: openai (Chat Completions), openai-responses, anthropic.
 * @param {AgentRunOptions & { authType: string }} options
 * @returns {Promise<AgentOutcome>}
 */
export async function runQwen({ base, model, sandbox, timeoutMs, authType }) {
  const endpoint = authType === "anthropic" ? { ANTHROPIC_BASE_URL: base, ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_MODEL: model } : { OPENAI_BASE_URL: `${base}/v1`, OPENAI_API_KEY: API_KEY, OPENAI_MODEL: model };
  const run = await runClient(join(BIN, "qwen"), ["--auth-type", authType, "-m", model, "--yolo", "-o", "json", PROMPT], {
    cwd: sandbox.work,
    // QWEN_CODE_NO_RELAUNCH: the CLI's own switch (it sets it for the children it starts) to run in
    // its first process instead of starting itself again with a larger heap; the wire is the same,
    // and each run costs about half the CPU.
    env: { ...sandbox.env, ...endpoint, QWEN_CODE_SUPPRESS_YOLO_WARNING: "1", QWEN_CODE_NO_RELAUNCH: "true" },
    timeoutMs,
  });
  const result = qwenResult(run.stdout);
  return { run, answer: typeof result?.result === "string" ? result.result : null, succeeded: run.code === 0 && result?.is_error !== true };
}

/**
 * Continue CLI: a config.yaml (schema v1) with one `openai` provider model on Switchyard; `cn -p
 * --config`. Headless, its default permission policy allows the Bash tool, so no --auto.
 * @param {AgentRunOptions} options
 * @returns {Promise<AgentOutcome>}
 */
export async function runContinue({ base, model, sandbox, timeoutMs }) {
  const continueHome = join(sandbox.home, ".continue");
  const config = join(continueHome, "config.yaml");
  mkdirSync(continueHome, { recursive: true });
  writeFileSync(
    config,
    [
      "name: Switchyard",
      "version: 1.0.0",
      "schema: v1",
      "models:",
      "  - name: Switchyard",
      "    provider: openai",
      `    model: ${model}`,
      `    apiBase: ${base}/v1`,
      `    apiKey: ${API_KEY}`,
      "    roles: [chat, edit, apply]",
      "    capabilities: [tool_use]",
      "",
    ].join("\n"),
  );
  const run = await runClient(join(BIN, "cn"), ["-p", "--config", config, PROMPT], {
    cwd: sandbox.work,
    env: { ...sandbox.env, CONTINUE_CLI_ENABLE_TELEMETRY: "0" },
    timeoutMs,
  });
  // -p prints the final answer, and only that, on stdout.
  const answer = run.stdout.trim() || null;
  return { run, answer, succeeded: run.code === 0 };
}

/**
 * OpenAI Agents SDK (JS), in process: an `openai` client on Switchyard, the SDK's OpenAIProvider
 * (Responses model, or Chat Completions with `useResponses: false`), one function tool that runs
 * the command with bash in the sandbox's working directory.
 * @param {AgentRunOptions & { api?: "responses" | "chat", stream?: boolean, previousResponseId?: string, input?: string }} options
 * @returns {Promise<AgentOutcome & { lastResponseId?: string }>}
 */
export async function runAgentsSdk({ base, model, sandbox, timeoutMs, api, stream, previousResponseId, input = PROMPT }) {
  const [{ default: OpenAI }, { Agent, Runner, tool }, { OpenAIProvider }] = await Promise.all([import("openai"), import("@openai/agents"), import("@openai/agents-openai")]);
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: timeoutMs });
  const provider = new OpenAIProvider({ openAIClient: client, useResponses: api === "responses" });
  const runner = new Runner({ modelProvider: provider, tracingDisabled: true });
  const shell = tool({
    name: "shell",
    description: "Run a shell command with bash in the working directory; returns its standard output and error.",
    parameters: { type: "object", properties: { command: { type: "string", description: "The command line" } }, required: ["command"], additionalProperties: false },
    strict: true,
    // A JSON-Schema tool's input is unknown to the SDK's types; the strict schema above is what it checked.
    execute: (input) =>
      new Promise((resolve) => execFile("bash", ["-lc", /** @type {{ command: string }} */ (input).command], { cwd: sandbox.work, timeout: 30_000 }, (err, stdout, stderr) => resolve(`${stdout}${stderr}${err ? `\n(exit ${err.code ?? err.signal})` : ""}`))),
  });
  const agent = new Agent({ name: "Switchyard proof", instructions: "You are a coding agent. Use the shell tool to act; answer briefly.", model, tools: [shell] });
  const started = Date.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const options = { signal, ...(previousResponseId ? { previousResponseId } : {}) };
    let result;
    let events = 0;
    if (stream) {
      result = await runner.run(agent, input, { ...options, stream: true });
      for await (const _event of result) events++;
      await result.completed;
      if (result.error) throw result.error;
    } else {
      result = await runner.run(agent, input, options);
    }
    const answer = typeof result.finalOutput === "string" ? result.finalOutput : null;
    const summary = { items: result.newItems.map((i) => i.type), lastResponseId: result.lastResponseId, streamEvents: events };
    return { run: { code: 0, signal: null, timedOut: false, ms: Date.now() - started, stdout: JSON.stringify(summary, null, 2), stderr: "" }, answer, succeeded: true, lastResponseId: result.lastResponseId };
  } catch (e) {
    // The SDK's errors (openai's APIError) carry the status and the answer's error object.
    const err = /** @type {{ stack?: string, status?: number, error?: unknown } | null | undefined} */ (e);
    const detail = [err?.stack ?? String(e), err?.status ? `status ${err.status}` : "", err?.error ? JSON.stringify(err.error) : ""].filter(Boolean).join("\n");
    return { run: { code: 1, signal: null, timedOut: signal.aborted, ms: Date.now() - started, stdout: "", stderr: detail }, answer: null, succeeded: false };
  }
}

/**
 * The last line of a text that parses as a JSON object (a client's output: read as the client writes it).
 * @param {string} text
 */
function lastJson(text) {
  const lines = text.trim().split("\n").reverse();
  for (const line of lines) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") return v;
    } catch {}
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** @param {string} text */
function jsonLines(text) {
  const out = [];
  for (const line of text.split("\n")) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") out.push(v);
    } catch {}
  }
  return out;
}

/**
 * Qwen Code's `-o json`: an array of events whose last is {type: "result", …}, or one result object.
 * @param {string} text
 */
function qwenResult(text) {
  let v;
  try {
    v = JSON.parse(text.trim());
  } catch {
    v = lastJson(text);
  }
  if (Array.isArray(v)) return v.findLast((e) => e?.type === "result") ?? null;
  return v;
}
