// The bounds on declared tools and on the tool-call rewrite endpoint's input, in one place: the
// request schemas check them (the schema limits through tool-schema-limits.ts), the tool-call engine
// relies on them (a name longer than a declared one can have is never compared letter by letter),
// and docs/security.md's Limits table lists them.
// Here rather than in toolcalls/ because the schemas (a lower layer) check them.
import * as z from "zod/mini";

/**
 * Longest tool or function name. OpenAI's own rule is `^[a-zA-Z0-9_-]{1,64}$`; 128 leaves room for
 * the prefixes agents add (Claude Code's `mcp__SERVER__TOOL`, Codex's `NAMESPACE__TOOL`), as
 * Anthropic's 128 does.
 */
export const MAX_TOOL_NAME_LENGTH = 128;

/**
 * A tool name: OpenAI's characters plus `.`, `:` and `/`, which MCP servers use (`admin.tools.list`,
 * `user-profile/update`, SEP-986) and harmony writes (`functions.NAME`).
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.:/-]{1,128}$/;

export const TOOL_NAME_RULE = `must be 1 to ${MAX_TOOL_NAME_LENGTH} characters, each a letter, a digit or one of _ - . : /`;

/** A declared tool's name, checked by the rule above (a 400 `invalid_value` naming the field). */
export const ToolName = z.string().check(z.regex(TOOL_NAME_PATTERN, TOOL_NAME_RULE));

/**
 * How many edit-distance cells one request may spend matching model-written tool names to declared
 * ones fuzzily (`get_wether` → `get_weather`): about 20 ms. A few near misses against hundreds of
 * tools fit many times over; thousands of long invented names against 512 tools do not, and once it
 * is spent a name that is not declared (up to case and separators) is not matched.
 */
export const MAX_FUZZY_NAME_CELLS = 4_000_000;

/**
 * `POST /v1/tool_calls/rewrite`: the longest `text`, in UTF-16 code units (what `String.length`
 * counts). 1 Mi characters is about 250,000 tokens: more than any one answer of a model with a
 * 128K context, and small enough that the (linear) parse of the worst text stays well under a second.
 */
export const MAX_REWRITE_TEXT_LENGTH = 1024 * 1024;

/**
 * The most tools one request declares, counting a Responses namespace's own (OpenAI allows 128;
 * agents with many MCP servers send a few hundred), on every endpoint that takes tools.
 */
export const MAX_TOOLS = 512;

/** The tool-call rewrite endpoint's most tools: the same as every endpoint's. */
export const MAX_REWRITE_TOOLS = MAX_TOOLS;

/**
 * The deepest nesting of objects and arrays in one declared schema (a tool's `parameters` or
 * `input_schema`, a response format's `schema`), on every endpoint. Real schemas nest a handful of
 * levels; past the limit the proxy's own walks over the schema would be the risk.
 */
export const MAX_TOOL_SCHEMA_DEPTH = 64;

/** The most characters of all of one request's tool schemas together, as JSON. */
export const MAX_TOOL_SCHEMAS_LENGTH = 1024 * 1024;
