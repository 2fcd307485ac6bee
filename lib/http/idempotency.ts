import { createHash } from "node:crypto";
import { invalidParams } from "../errors.js";

// The HTTP side of Idempotency-Key (lib/billing/idempotency.ts keeps the claims): the key read from
// the request and the body's fingerprint (the first answer is kept by lib/http/kept-answers.ts).

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, or null without one; 400 when it is not 1 to 255 visible ASCII characters. */
export function idempotencyKeyOf(headers: Readonly<Record<string, string>>): string | null {
  const key = headers["idempotency-key"];
  if (key === undefined) return null;
  if (!KEY.test(key)) throw invalidParams("Idempotency-Key: must be 1 to 255 visible ASCII characters (a UUID is a good choice).");
  return key;
}

/** JSON with object keys sorted, so that the same body always reads the same. */
export const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : value !== null && typeof value === "object"
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(value);

/** What makes two requests the same: the route and the validated body (defaults applied, so `{}` and the defaults spelt out agree). */
export const fingerprint = (routeId: string, body: unknown): string =>
  createHash("sha256")
    .update(`${routeId}\n${canonical(body)}`)
    .digest("hex");
