// What an answer or a stored record shows in place of a secret (lib/api/secrets.ts), neutral so
// that every layer may use it: the render's final URL (lib/render/capture.ts) drops its password so.

/** What an answer shows in place of a secret value. */
export const REDACTED = "[redacted]";

// scheme://user:password@host: the password runs to the last "@" before the path (one may hold an unescaped "@").
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^/?#]*@/i;

/** `url` with the password of its user-info, if any, shown as REDACTED (the username kept). */
export const withoutPassword = (url: string) => url.replace(URL_PASSWORD, `$1:${REDACTED}@`);
