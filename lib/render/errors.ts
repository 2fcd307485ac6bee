import { TimeoutError } from "puppeteer-core";
import { AppError } from "../errors.js";
import { credentialsScrubbed } from "../redacted.js";
import type { GuardSession } from "./guard/network-guard.js";
import { targetKey } from "./guard/network-guard.js";
import type { ProxyFailure } from "./guard/upstream-proxy.js";

// Where puppeteer/DevTools failures enter our code they become one of three domain errors.

/**
 * 422: the page cannot be loaded (unresolvable, refused, unreachable, or an HTTP error status), for
 * `reason`: the credentials of any URL it names taken out (it is answered, logged, kept with an item).
 */
export const invalidUrl = (reason: string, cause?: unknown) =>
  new AppError("INVALID_URL", `The page could not be loaded: ${credentialsScrubbed(reason)}.`, { cause });

/** 504: the page (or a selector) took longer than allowed. */
export const renderTimeout = (what: string, cause?: unknown) => new AppError("RENDER_TIMEOUT", what, { cause });

/** 502: the customer's proxy failed: refused, would not take its credentials, did not answer in time, or could not be reached. */
export const proxyError = (failure: ProxyFailure) => {
  const which = { refused: "refused", auth: "authentication failed", timeout: "timed out", unreachable: "unreachable" }[failure.kind];
  return new AppError("PROXY_ERROR", `The proxy failed (${which}): ${failure.message}. You were not charged for it.`, { cause: failure });
};

/** 500: the browser crashed or the capture failed. */
export const renderError = (cause?: unknown) =>
  new AppError("RENDER_ERROR", "The browser failed while rendering this page. Please retry; you were not charged for it.", { cause });

// Chromium's net errors a client can act on, in words.
const NET_ERRORS: Record<string, string> = {
  ERR_NAME_NOT_RESOLVED: "the host name could not be resolved",
  ERR_CONNECTION_REFUSED: "the server refused the connection",
  ERR_CONNECTION_RESET: "the connection was reset",
  ERR_CONNECTION_CLOSED: "the connection was closed",
  ERR_CONNECTION_TIMED_OUT: "the connection timed out",
  ERR_ADDRESS_UNREACHABLE: "the address is unreachable",
  ERR_CERT_AUTHORITY_INVALID: "the TLS certificate is not trusted",
  ERR_CERT_COMMON_NAME_INVALID: "the TLS certificate does not match the host",
  ERR_CERT_DATE_INVALID: "the TLS certificate has expired or is not yet valid",
  ERR_SSL_PROTOCOL_ERROR: "the TLS handshake failed",
  ERR_TOO_MANY_REDIRECTS: "it redirects too many times",
  ERR_EMPTY_RESPONSE: "the server sent an empty response",
  ERR_INVALID_RESPONSE: "the server sent an invalid response",
  ERR_UNSAFE_REDIRECT: "it redirects to a URL that is not http or https",
  ERR_ABORTED: "the navigation was aborted (the URL may be a download rather than a page)",
};

/** Translates a navigation failure; `url` is the document that failed (the last hop of a redirect chain). */
export function translateNavigationError(error: unknown, url: string | undefined, guard: GuardSession, pageLoadSeconds: number): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof TimeoutError) return renderTimeout(`The page did not finish loading within ${pageLoadSeconds} s.`, error);
  const message = error instanceof Error ? error.message : String(error);
  const net = /net::(ERR_[A-Z_]+)/.exec(message)?.[1];
  if (net) {
    // A navigation that failed committed nothing, so all the guard saw was its redirect chain, which
    // stopped at the hop the guard failed. Puppeteer may not have announced that hop (a redirect's
    // next request waits for Chromium's extra information on the redirect: late on a busy machine,
    // or never): then the guard's last failure is the reason.
    const guardReason = (url ? guardFailure(url, guard) : undefined) ?? [...guard.failures.values()].at(-1);
    return invalidUrl(guardReason ?? NET_ERRORS[net] ?? `the browser reported ${net}`, error);
  }
  return renderError(error);
}

/** What the guard recorded about the target of `url`, if it refused or failed it. */
export function guardFailure(url: string, guard: GuardSession): string | undefined {
  try {
    const parsed = new URL(url);
    const port = Number(parsed.port || (parsed.protocol === "https:" || parsed.protocol === "wss:" ? 443 : 80));
    return guard.failures.get(targetKey(parsed.hostname, port));
  } catch {
    return undefined;
  }
}

/** Translates a failure after the page loaded (capture, evaluation): a crash or a rendering failure. */
export function translateRenderError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof TimeoutError) return renderTimeout("The capture took too long.", error);
  // Everything else (a crashed or disconnected browser, a failed capture) is a rendering failure.
  return renderError(error);
}
