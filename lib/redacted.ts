// What an answer or a stored record shows in place of a secret (lib/api/secrets.ts), neutral so
// that every layer may use it: a page's final URL and the errors that name it drop its credentials
// (lib/render/capture.ts, lib/render/errors.ts, lib/metadata/fetch.ts, lib/content/browser.ts).

/** What an answer shows in place of a secret value. */
export const REDACTED = "[redacted]";

/** The URL `value` holds credentials (a username or a password), however it is spelled ("https:ann:pw@host" parses as well). */
const credentialsOf = (value: string) => {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  return url.username || url.password ? url : null;
};

/** Whether `value` is a URL that carries a username or a password. */
export const hasCredentials = (value: string) => credentialsOf(value) !== null;

/** `url` with the password of its user-info, if any, shown as REDACTED (the username kept), written as the URL standard writes it. */
export function withoutPassword(value: string): string {
  const url = credentialsOf(value);
  if (!url?.password) return value;
  url.password = "";
  return url.href.replace(/^([^:]+:\/\/[^@/?#]*)@/, `$1:${REDACTED}@`);
}

/** `url` without its user-info (a page's final URL as an answer or a link says it, and what is resolved against it). */
export function withoutCredentials(value: string): string {
  const url = credentialsOf(value);
  if (!url) return value;
  url.username = "";
  url.password = "";
  return url.href;
}

/** `text` with the user-info of every URL written in it taken out (an error that names a page). */
export const credentialsScrubbed = (text: string) => text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"']*@/gi, "$1");
