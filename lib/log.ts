import { config } from "./config.js";

// Structured logs: one JSON object per line, which CloudWatch Logs Insights can query.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

/**
 * What never reaches a log line, wherever it hides (a field, an error's message or stack): a URL's
 * user-info (`user:pass@`: a proxy's or a page's basic-auth credentials), its query and fragment
 * (pages carry tokens there, and a signed link its signature), API keys,
 * signing and webhook secrets, and stored outputs' names. Applied to the line as written.
 */
const SECRETS: readonly [RegExp, string][] = [
  // Up to the last "@" before the path: a password may itself hold an unescaped "@" or ":".
  [/\b((?:https?|wss?|socks5?h?):\/\/)[^\s"'/?#\\<>]*@/gi, "$1…@"],
  [/\b((?:https?|wss?):\/\/[^\s"'?#\\<>]*)[?#][^\s"'\\<>]*/gi, "$1"],
  [/\bshl_live_[A-Za-z0-9_-]+/g, "shl_live_…"],
  [/\bsks_[A-Za-z0-9_-]+/g, "sks_…"],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, "whsec_…"],
  // A stored output's name is the credential of its link (GET /api/v1/outputs/{day}/{file}), and of its key in the bucket.
  [/\boutputs\/(\d{4}-\d{2}-\d{2})\/[0-9a-f-]{36}(\.[a-z]+)?/g, "outputs/$1/…$2"],
];

/** `text` with SECRETS taken out. */
export const scrubbed = (text: string): string => SECRETS.reduce((line, [pattern, replacement]) => line.replace(pattern, replacement), text);

function write(level: Level, message: string, fields: Record<string, unknown>) {
  if (LEVELS[level] < LEVELS[config.LOG_LEVEL]) return;
  const line = scrubbed(JSON.stringify({ level, time: new Date().toISOString(), message, ...fields }));
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

/** The service logger. */
export const log = {
  debug: (message: string, fields: Record<string, unknown> = {}) => write("debug", message, fields),
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write("warn", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};

/** A loggable summary of any thrown value (stack included: logs are ours, not the client's). */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack, cause: error.cause === undefined ? undefined : describeError(error.cause) };
  }
  return { value: String(error) };
}
