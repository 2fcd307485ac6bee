// The secrets a request carries in its page controls (docs/api.md, "Monitors", secrets in answers): header
// values, cookie values, basic auth's password, and the password in a URL's user-info (the page's
// `url`, `webhookUrl`, `proxy`). They are sent to the page, never back to a client: an answer that
// echoes a request it keeps (a monitor's) shows each as REDACTED, with the names that say which one
// it is (a header's or cookie's name, basic auth's and a URL's username). A change that sends
// REDACTED back keeps the value it stands for.

/** What an answer shows in place of a secret value. */
export const REDACTED = "[redacted]";

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
}

/** The fields that are URLs a password may ride in. */
const URL_FIELDS = ["url", "webhookUrl", "proxy"] as const;

// scheme://user:password@host: the password runs to the last "@" before the path (one may hold an unescaped "@").
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^/?#]*@/i;
const withoutPassword = (url: string) => url.replace(URL_PASSWORD, `$1:${REDACTED}@`);

/** `request` as an answer shows it: every secret value REDACTED, the rest as given. */
export function redactedControls<T extends object>(given: T): T {
  const request = given as T & SecretControls;
  return {
    ...request,
    ...(request.headers ? { headers: Object.fromEntries(Object.keys(request.headers).map((name) => [name, REDACTED])) } : {}),
    ...(request.cookies ? { cookies: request.cookies.map((cookie) => ({ ...cookie, value: REDACTED })) } : {}),
    ...(request.httpAuth ? { httpAuth: { ...request.httpAuth, password: REDACTED } } : {}),
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
