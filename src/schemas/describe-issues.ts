// zod/mini ships no locale, so its messages are bare ("Invalid input"). Operators need the field and
// the fix, so each issue is described here from its structured data.
import type * as z from "zod/mini";

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function describeValue(input: unknown): string {
  if (input === undefined) return "nothing";
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  return typeof input === "object" ? "an object" : `${typeof input}`;
}

/** zod/mini does not report the input, so it is looked up in the validated value by path. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

export function describeIssue(issue: z.core.$ZodIssue, input: unknown): { path: string; message: string; missing: boolean } {
  const path = formatPath(issue.path);
  const where = path || "the body";
  const value = valueAt(input, issue.path);
  const missing = issue.code === "invalid_type" && value === undefined;
  const out = (message: string, p = path) => ({ path: p, message, missing });
  switch (issue.code) {
    case "invalid_type":
      if (missing) return out(`${where} is required`);
      return out(`${where} must be ${article(issue.expected)}, not ${describeValue(value)}`);
    case "unrecognized_keys":
      return out(
        `unknown key${issue.keys && issue.keys.length > 1 ? "s" : ""} ${issue.keys?.map((k) => `"${k}"`).join(", ")} in ${path || "the top level"} (check the spelling against docs/configuration.md)`,
        issue.keys?.length ? formatPath([...issue.path, issue.keys[0]!]) : path,
      );
    case "invalid_format":
      if (issue.format === "url") return out(`${where} must be an http:// or https:// URL`);
      // A pattern checked with its own wording (a tool name's rule) says what the value must be.
      if (issue.format === "regex") return out(issue.message.startsWith("must ") ? `${where} ${issue.message}` : `${where} has an invalid format`);
      return out(`${where} must be a valid ${issue.format}`);
    case "invalid_value":
      return out(`${where} must be one of ${issue.values?.map((v) => JSON.stringify(v)).join(", ")}`);
    case "invalid_union":
      if ("note" in issue && issue.note === "No matching discriminator") {
        return out(`${where} needs a valid "kind" ("llama", "openai" or "browser")`);
      }
      return out(`${where} does not match any allowed shape`);
    case "too_small":
      if (issue.origin === "array") return out(`${where} needs at least ${issue.minimum} item(s)`);
      if (issue.origin === "string") return out(`${where} must not be empty`);
      return out(`${where} must be at least ${issue.minimum}`);
    case "too_big":
      if (issue.origin === "array") return out(`${where} must have at most ${issue.maximum} items`);
      if (issue.origin === "string") return out(`${where} must be at most ${issue.maximum} characters long`);
      return out(`${where} must be at most ${issue.maximum}`);
    case "custom":
      // The request schemas' own checks word their message as what the value must be.
      return out(issue.message.startsWith("must ") ? `${where} ${issue.message}` : `${where}: ${issue.message}`);
    default:
      return out(`${where}: ${issue.message}`);
  }
}

function article(type?: string): string {
  if (!type) return "a value of another type";
  if (type === "array" || type === "object" || type === "int") return type === "int" ? "an integer" : `an ${type}`;
  return `a ${type}`;
}
