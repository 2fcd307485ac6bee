import { createHash } from "node:crypto";
import type { APIGatewayProxyEventV2 } from "aws-lambda";

const normalized = new WeakMap<APIGatewayProxyEventV2, Record<string, string>>();

/** The request's headers with lower-case names, computed once per event and shared by every step. */
export function lowerCaseHeaders(event: APIGatewayProxyEventV2): Readonly<Record<string, string>> {
  let headers = normalized.get(event);
  if (!headers) {
    headers = {};
    for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
    normalized.set(event, headers);
  }
  return headers;
}

/** A CSP source for exactly this inline block. */
export const inlineHash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The headers of our HTML pages: nothing loads but what `allowed` names (CSP directives), no framing, no sniffing, no referrer. */
export const pageHeaders = (allowed: readonly string[], cacheControl: string): Record<string, string> => ({
  "Content-Security-Policy": ["default-src 'none'", ...allowed, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join("; "),
  "X-Content-Type-Options": "nosniff",
  // Never in a frame (frame-ancestors above, for browsers that predate it): no clickjacking of the dashboard.
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": cacheControl,
});
