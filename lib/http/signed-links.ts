import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { AppError, invalidParams } from "../errors.js";

// Signed links (docs/api.md, "Signed links"): GET /api/v1/screenshot?<render fields>&keyId&expires&signature,
// authorised by an HMAC-SHA256 of its canonical query with one of the account's signing secrets, so
// that a screenshot can sit in <img src> or og:image without a key.

/** How far ahead a link's `expires` may be: a year (366 days). */
const MAX_LINK_LIFE_MS = 366 * 24 * 3600 * 1000;

/** The parameters that authorise a link; every other one is a render field. */
const AUTH_PARAMS = ["keyId", "expires", "signature"] as const;

/** RFC 3986 percent-encoding: everything but the unreserved characters (A-Z a-z 0-9 - . _ ~), as UTF-8. */
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The query's parameters, decoded ("+" is a space, as in forms); a name given twice is refused. */
export function queryParams(rawQuery: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (params.has(name)) throw invalidParams(`${name}: given twice in the query; give each parameter once.`);
    params.set(name, value);
  }
  return params;
}

/** What is signed: every parameter but `signature`, sorted by name, each `name=value` RFC 3986-encoded, joined with "&". */
export const canonicalQuery = (params: ReadonlyMap<string, string>): string =>
  [...params]
    .filter(([name]) => name !== "signature")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .join("&");

/** The lower-case hex HMAC-SHA256 of the canonical query with `secret` (its UTF-8 bytes). */
export const signatureOf = (secret: string, params: ReadonlyMap<string, string>): string => hmacHex(secret, canonicalQuery(params));

const hmacHex = (secret: string, canonical: string): string => createHmac("sha256", secret).update(canonical).digest("hex");

/** A signing key's id as lib/billing/signing-keys.ts makes them: "sk_" and 12 random bytes in base64url. */
const SIGNING_KEY_ID = /^sk_[A-Za-z0-9_-]{16}$/;

const invalid = (why: string) => new AppError("INVALID_SIGNATURE", `This link's signature is not valid: ${why}.`);

/** A signing key as links are checked against it: its account, secret and daily limit (lib/billing/signing-keys.ts). */
interface LinkKey {
  readonly accountId: string;
  readonly secret: string;
  readonly dailyLimitCents: number | null;
}

/**
 * The signing key of a valid link, with its id (its account is charged): 403 INVALID_SIGNATURE when a parameter that authorises it
 * is missing, its key is unknown or revoked, or its signature does not match; 403 LINK_EXPIRED
 * (checked only once the signature holds) past `expires`.
 */
export async function linkKeyOf(
  rawQuery: string,
  keyOf: (keyId: string) => Promise<LinkKey | null>,
  now = Date.now(),
): Promise<{ readonly accountId: string; readonly keyId: string; readonly dailyLimitCents: number | null }> {
  const params = queryParams(rawQuery);
  const [keyId, expires, signature] = AUTH_PARAMS.map((name) => params.get(name));
  if (!keyId || !expires || !signature)
    throw invalid("it needs keyId, expires and signature (to use an API key instead, POST the fields as JSON to the same path)");
  // One signature, one URL: another spelling of the same query (parameters reordered, characters
  // encoded differently) would be another CDN cache entry, reaching a function at the owner's cost.
  const canonical = canonicalQuery(params);
  if (rawQuery !== `${canonical}&signature=${signature}`)
    throw invalid("it must be written as it was signed: the parameters sorted by name, RFC 3986-encoded, signature last");
  if (!/^[0-9a-f]{64}$/.test(signature)) throw invalid("signature must be 64 lower-case hex digits");
  // Not looked up unless it could be one of ours (a key of DynamoDB's over 1 KB would be a 500).
  if (!SIGNING_KEY_ID.test(keyId)) throw invalid("keyId is not a signing key's");
  const key = await keyOf(keyId);
  const expected = key && Buffer.from(hmacHex(key.secret, canonical), "hex");
  if (!key || !expected || !timingSafeEqual(expected, Buffer.from(signature, "hex")))
    throw invalid("it was not signed with this account's key, or it was changed");
  if (!/^\d{1,12}$/.test(expires) || Number(expires) * 1000 <= now) throw new AppError("LINK_EXPIRED", "This link has expired; sign a new one.");
  if (Number(expires) * 1000 > now + MAX_LINK_LIFE_MS) throw invalid("expires is more than a year ahead; a link lives a year at most");
  return { accountId: key.accountId, keyId, dailyLimitCents: key.dailyLimitCents };
}

const stringFields = new WeakMap<z.ZodType, ReadonlySet<string>>();

/**
 * A signed link's render fields as a request body for `schema`: a field the schema takes as a string
 * as it is, any other (numbers, booleans, objects, lists) as the JSON text it travels as. A value
 * that is not JSON is left as text, for validation to name.
 */
export function queryBody(rawQuery: string, schema: z.ZodType): Record<string, unknown> {
  let strings = stringFields.get(schema);
  if (!strings) {
    const { properties = {} } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, { type?: unknown }> };
    strings = new Set(Object.entries(properties).flatMap(([name, field]) => (field.type === "string" ? [name] : [])));
    stringFields.set(schema, strings);
  }
  const body: Record<string, unknown> = {};
  for (const [name, value] of queryParams(rawQuery)) {
    if ((AUTH_PARAMS as readonly string[]).includes(name)) continue;
    if (strings.has(name)) body[name] = value;
    else {
      try {
        body[name] = JSON.parse(value);
      } catch {
        body[name] = value;
      }
    }
  }
  return body;
}
