import { isDeepStrictEqual } from "node:util";
import { AppError } from "../errors.js";
import { REDACTED, withoutPassword } from "../redacted.js";
import { seal, unseal } from "../storage/sealed.js";

// The secrets a request carries in its page controls (docs/api.md, "Monitors", secrets in answers): header
// values, cookie values, basic auth's password, the password in a URL's user-info (the page's
// `url`, `webhookUrl`, `proxy`), and an item's upload (a presigned URL and its headers). They are
// sent to the page, never back to a client: an answer that echoes a request it keeps (a monitor's)
// shows each as REDACTED, with the names that say which one it is (a header's or cookie's name,
// basic auth's and a URL's username). A change that sends REDACTED back keeps the value it stands
// for. At rest (a job's item, a monitor) they are sealed (lib/storage/sealed.ts), the request kept
// as an answer would show it.

interface SecretCookie {
  readonly name: string;
  readonly value: string;
  readonly domain?: string | undefined;
  readonly path?: string | undefined;
}

/** The page controls that hold secrets, as a request (or a stored one) has them. */
interface SecretControls {
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly cookies?: readonly SecretCookie[] | undefined;
  readonly httpAuth?: { readonly username: string; readonly password: string } | undefined;
  readonly proxy?: string | undefined;
  readonly url?: string | undefined;
  readonly webhookUrl?: string | undefined;
  readonly upload?: { readonly url: string; readonly headers?: Readonly<Record<string, string>> | undefined } | undefined;
}

/** The fields that are URLs a password may ride in. */
const URL_FIELDS = ["url", "webhookUrl", "proxy"] as const;

const namesOnly = (headers: Readonly<Record<string, string>>) => Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED]));

/** `request` as an answer shows it: every secret value REDACTED, the rest as given. */
export function redactedControls<T extends object>(given: T): T {
  const request = given as T & SecretControls;
  return {
    ...request,
    ...(request.headers ? { headers: namesOnly(request.headers) } : {}),
    ...(request.cookies ? { cookies: request.cookies.map((cookie) => ({ ...cookie, value: REDACTED })) } : {}),
    ...(request.httpAuth ? { httpAuth: { ...request.httpAuth, password: REDACTED } } : {}),
    // A presigned URL is a credential whole.
    ...(request.upload ? { upload: { url: REDACTED, ...(request.upload.headers ? { headers: namesOnly(request.upload.headers) } : {}) } } : {}),
    ...Object.fromEntries(URL_FIELDS.filter((field) => typeof request[field] === "string").map((field) => [field, withoutPassword(request[field]!)])),
  };
}

const sameCookie = (a: SecretCookie, b: SecretCookie) => a.name === b.name && a.domain === b.domain && a.path === b.path;

/**
 * `change` (a PATCH's fields) with each REDACTED value it sends back replaced by the stored value it
 * stands for: a header's by its name, a cookie's by its name, domain and path, basic auth's password
 * (for the same username), a URL's when the URL is the stored one as shown. One with nothing stored
 * under it stays REDACTED, as sent.
 */
export function restoredControls<T extends object>(given: T, kept: object): T {
  const change = given as T & SecretControls;
  const stored = kept as SecretControls;
  const storedHeader = (name: string) => Object.entries(stored.headers ?? {}).find(([other]) => other.toLowerCase() === name.toLowerCase())?.[1];
  return {
    ...change,
    ...(change.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(change.headers).map(([name, value]) => [name, value === REDACTED ? (storedHeader(name) ?? value) : value]),
          ),
        }
      : {}),
    ...(change.cookies
      ? {
          cookies: change.cookies.map((cookie) =>
            cookie.value === REDACTED ? { ...cookie, value: stored.cookies?.find((other) => sameCookie(other, cookie))?.value ?? cookie.value } : cookie,
          ),
        }
      : {}),
    ...(change.httpAuth?.password === REDACTED && stored.httpAuth?.username === change.httpAuth.username
      ? { httpAuth: { ...change.httpAuth, password: stored.httpAuth.password } }
      : {}),
    // A URL sent back exactly as it was shown is the stored one.
    ...Object.fromEntries(
      URL_FIELDS.filter(
        (field) => typeof change[field] === "string" && typeof stored[field] === "string" && change[field] === withoutPassword(stored[field]!),
      ).map((field) => [field, stored[field]]),
    ),
  };
}

/** The controls whose secrets are given for the page's own origin (sent with its requests). */
const PAGE_SECRETS = ["headers", "cookies", "httpAuth"] as const;

/** `request` without the secrets given for its page's origin. */
export function withoutPageSecrets<T extends object>(request: T): T {
  const rest = { ...request } as Record<string, unknown>;
  for (const field of PAGE_SECRETS) delete rest[field];
  return rest as T;
}

/** The first field of `request` whose secret is still REDACTED (nothing stored stood behind it), or null. */
export function redactedLeft(request: SecretControls): string | null {
  const header = Object.entries(request.headers ?? {}).find(([, value]) => value === REDACTED);
  if (header) return `headers.${header[0]}`;
  const cookie = request.cookies?.findIndex((c) => c.value === REDACTED) ?? -1;
  if (cookie >= 0) return `cookies.${cookie}.value`;
  if (request.httpAuth?.password === REDACTED) return "httpAuth.password";
  return null;
}

/** The fields a secret may be in, sealed at rest whole. */
const SECRET_FIELDS = ["headers", "cookies", "httpAuth", "proxy", "url", "upload"] as const;

/**
 * `request` split for keeping at rest: `open`, as an answer shows it (every secret REDACTED, the
 * names kept), and `secret`, the fields that held a secret, as given (null when none did).
 */
export function splitSecrets<T extends object>(request: T): { open: T; secret: Record<string, unknown> | null } {
  const given = request as Record<string, unknown>;
  const shown = redactedControls(request) as Record<string, unknown>;
  const held = SECRET_FIELDS.filter((field) => given[field] !== undefined && !isDeepStrictEqual(given[field], shown[field]));
  if (!held.length) return { open: request, secret: null };
  return {
    open: { ...request, ...Object.fromEntries(held.map((field) => [field, shown[field]])) },
    secret: Object.fromEntries(held.map((field) => [field, given[field]])),
  };
}

/** A request as kept at rest: its secrets sealed in `sealed` (the box; the key that opens it is kept apart, by its row). */
export type KeptRequest<T> = T & { readonly sealed?: string };

/** `request` as kept at rest for `context`, and the key its secrets open with (none when it holds no secret). */
export async function sealRequest<T extends object>(request: T, context: string): Promise<{ request: KeptRequest<T>; secretKey?: string }> {
  const { open, secret } = splitSecrets(request);
  if (!secret) return { request };
  const sealed = await seal(secret, context);
  return { request: { ...open, sealed: sealed.box }, secretKey: sealed.key };
}

/** The secrets sealed in `box` under `secretKey` for `context`; a throw when the key is gone. */
export async function openSecrets(box: string, secretKey: string | undefined, context: string): Promise<Record<string, unknown>> {
  if (!secretKey) throw new AppError("INTERNAL_ERROR", "The request's secrets are gone: the key that opens them was deleted.");
  return unseal<Record<string, unknown>>({ key: secretKey, box }, context);
}

/** `kept` with its secrets back (lib/storage/sealed.ts); as it is when it holds none. */
export async function openRequest<T extends object>(kept: KeptRequest<T>, secretKey: string | undefined, context: string): Promise<T> {
  const { sealed, ...open } = kept;
  if (sealed === undefined) return kept;
  return { ...open, ...(await openSecrets(sealed, secretKey, context)) } as T;
}
