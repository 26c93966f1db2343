// zod/mini ships no locale, so its messages are bare ("Invalid input"). Operators need the field and
// the fix, so each issue is described here from its structured data.

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  format?: string;
  keys?: string[];
  values?: unknown[];
  minimum?: number | bigint;
  maximum?: number | bigint;
  origin?: string;
  input?: unknown;
  note?: string;
  errors?: Issue[][];
}

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

export function describeIssue(issue: Issue, root = ""): { path: string; message: string } {
  const path = formatPath(issue.path) || root;
  const where = path || "the body";
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return { path, message: `${where} is required` };
      return { path, message: `${where} must be ${article(issue.expected)}, not ${describeValue(issue.input)}` };
    case "unrecognized_keys":
      return {
        path: issue.keys?.length ? formatPath([...issue.path, issue.keys[0]!]) : path,
        message: `unknown key${issue.keys && issue.keys.length > 1 ? "s" : ""} ${issue.keys?.map((k) => `"${k}"`).join(", ")} in ${where} (check the spelling against docs/configuration.md)`,
      };
    case "invalid_format":
      if (issue.format === "url") return { path, message: `${where} must be an http:// or https:// URL` };
      if (issue.format === "regex") return { path, message: `${where} has an invalid format` };
      return { path, message: `${where} must be a valid ${issue.format}` };
    case "invalid_value":
      return { path, message: `${where} must be one of ${issue.values?.map((v) => JSON.stringify(v)).join(", ")}` };
    case "invalid_union":
      if (issue.note === "No matching discriminator") {
        return { path, message: `${where} needs a valid "kind" ("llama" or "browser")` };
      }
      return { path, message: `${where} does not match any allowed shape` };
    case "too_small":
      if (issue.origin === "array") return { path, message: `${where} needs at least ${issue.minimum} item(s)` };
      if (issue.origin === "string") return { path, message: `${where} must not be empty` };
      return { path, message: `${where} must be at least ${issue.minimum}` };
    case "too_big":
      return { path, message: `${where} must be at most ${issue.maximum}` };
    default:
      return { path, message: `${where}: ${issue.message}` };
  }
}

function article(type?: string): string {
  if (!type) return "a value of another type";
  if (type === "array" || type === "object" || type === "int") return type === "int" ? "an integer" : `an ${type}`;
  return `a ${type}`;
}
