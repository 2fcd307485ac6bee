import type { z } from "zod";
import { invalidParams } from "../errors.js";

const MAX_REPORTED_ISSUES = 3;
const MAX_READ_ISSUES = 50;
const MAX_REPORTED_KEYS = 5;
const MAX_KEY_CHARS = 40;

// Turns one zod issue into "field: rule" (or a sentence for the body as a whole).
function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    // A hostile body may carry millions of keys: name a handful, each cut short.
    const shown = issue.keys.slice(0, MAX_REPORTED_KEYS).map((k) => JSON.stringify(k.length > MAX_KEY_CHARS ? `${k.slice(0, MAX_KEY_CHARS)}…` : k));
    const more = issue.keys.length > MAX_REPORTED_KEYS ? ` and ${issue.keys.length - MAX_REPORTED_KEYS} more` : "";
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${shown.join(", ")}${more}${field ? ` in ${field}` : ""}`;
  }
  if (!field) return issue.code === "invalid_type" ? "the body must be a JSON object" : issue.message;
  // A missing required field reaches here as invalid_type with undefined input.
  if (issue.code === "invalid_type" && issue.input === undefined) return `${field}: is required`;
  return `${field}: ${issue.message}`;
}

/** Validates `input` against `schema`; throws INVALID_PARAMS naming each failing field and its rule. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  // One value can break two checks of one rule (1e308 is neither an integer nor in range): said once.
  // Only the first issues are read: a hostile body may have millions.
  const all = result.error.issues;
  const described = [...new Set(all.slice(0, MAX_READ_ISSUES).map(describeIssue))];
  const shown = described.slice(0, MAX_REPORTED_ISSUES);
  const unshown = described.length - shown.length + Math.max(0, all.length - MAX_READ_ISSUES);
  const more = unshown > 0 ? ` (and ${unshown} more)` : "";
  throw invalidParams(`Invalid request: ${shown.join("; ")}${more}.`, result.error);
}
