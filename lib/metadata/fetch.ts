import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import { config } from "../config.js";
import { withoutCredentials } from "../redacted.js";
import { invalidUrl } from "../render/errors.js";
import { resolveTarget } from "../render/guard/network-guard.js";

// Fetches a page without a browser under the same rules as the render guard: the name is resolved
// here, private/loopback/link-local/reserved addresses are refused, the connection goes to the very
// address that was checked (no DNS rebinding), and every redirect hop is checked again.

/** Redirects followed before giving up (browsers allow 20; real pages need a handful). */
const MAX_REDIRECTS = 10;

// A browser-like user agent (some sites serve bots a bare page), which still says who we are.
const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/153.0.0.0 Safari/537.36 Shotline/1.0";

interface FetchedResponse {
  /** The URL that answered, after redirects. */
  readonly url: string;
  readonly status: number;
  /** The media type, lower-case, without parameters ("" when absent). */
  readonly mediaType: string;
  /** The `charset` parameter of Content-Type, if any. */
  readonly charset: string | undefined;
  /** The decoded (decompressed) body; destroy it to stop reading. */
  readonly body: Readable;
}

// Node's socket errors a client can act on, in words.
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "the server refused the connection",
  ECONNRESET: "the connection was reset",
  EHOSTUNREACH: "the address is unreachable",
  ENETUNREACH: "the address is unreachable",
  ETIMEDOUT: "the connection timed out",
  CERT_HAS_EXPIRED: "the TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the TLS certificate is not trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "the TLS certificate is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the TLS certificate is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "the TLS certificate does not match the host",
  HPE_INVALID_CONSTANT: "the server sent an invalid response",
};

const describeSocketError = (error: NodeJS.ErrnoException) => SOCKET_ERRORS[error.code ?? ""] ?? `the connection failed (${error.code ?? error.message})`;

/** A response's body as its Content-Encoding (gzip, br, deflate) decodes it. */
export function decode(response: http.IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "br"
        ? zlib.createBrotliDecompress()
        : encoding === "deflate"
          ? zlib.createInflate()
          : null;
  if (!decoder) return response;
  response.on("error", (error) => decoder.destroy(error));
  decoder.on("close", () => response.destroy());
  return response.pipe(decoder);
}

/** One GET of `url`, connected to the checked address; no redirects followed. */
const requestOnce = (url: URL, accept: string, signal: AbortSignal, extra: Record<string, string>): Promise<http.IncomingMessage> =>
  guardedRequest(url, {
    method: "GET",
    signal,
    headers: { "user-agent": USER_AGENT, accept, "accept-language": "en;q=0.9, *;q=0.5", "accept-encoding": "gzip, deflate, br", ...extra },
  });

/**
 * Sends one request under the network guard (guardedRequest) within `timeoutMs`, the answer's body
 * left unread (a receiver's page is none of our business): the status it got, or why it got none.
 */
export async function guardedStatus(
  url: URL,
  init: Omit<Parameters<typeof guardedRequest>[1], "signal">,
  timeoutMs: number,
): Promise<{ status: number } | { error: string }> {
  try {
    const response = await guardedRequest(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    response.destroy();
    return { status: response.statusCode ?? 0 };
  } catch (error) {
    const reason = (error as Error).name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message;
    return { error: reason.slice(0, 300) };
  }
}

/**
 * One request to `url` under the network guard (its name resolved and checked here, the socket
 * connected to that very address), with `init`'s method, headers and body; no redirects followed.
 * A refused or unreachable address is INVALID_URL; `signal` aborts it.
 */
export async function guardedRequest(
  url: URL,
  init: { method: "GET" | "POST" | "PUT"; headers: Record<string, string>; body?: string | Buffer; signal: AbortSignal },
): Promise<http.IncomingMessage> {
  const { signal } = init;
  const secure = url.protocol === "https:";
  const port = Number(url.port || (secure ? 443 : 80));
  const target = await resolveTarget(url.hostname, port, config.privateHosts);
  if (!target.ok) throw invalidUrl(target.reason);
  const family = net.isIP(target.address);
  return new Promise((resolve, reject) => {
    // Built from the URL's parts: user-info is never sent (and an invalid escape in it cannot throw).
    const request = (secure ? https : http).request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port,
      path: `${url.pathname}${url.search}`,
      method: init.method,
      signal,
      headers: { host: url.host, ...init.headers },
      // Host header, SNI and certificate check use the name; the socket goes to the checked address.
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all)
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family }]);
        else callback(null, target.address, family);
      },
    });
    request.once("response", resolve);
    // 101 Switching Protocols to a GET: nothing to read (without this the request would hang).
    request.once("upgrade", (reply, socket) => {
      socket.destroy();
      reject(invalidUrl(`${url.href} answered HTTP ${reply.statusCode}`));
    });
    request.once("error", (error: NodeJS.ErrnoException) => {
      if (signal.aborted) reject(signal.reason);
      else reject(invalidUrl(describeSocketError(error), error));
    });
    request.end(init.body);
  });
}

/**
 * GETs `url`, following up to MAX_REDIRECTS redirects, each checked like the first; answers with the
 * first non-redirect response. The caller reads (and destroys) `body`; `signal` aborts everything.
 * An HTTP error status is INVALID_URL; so is a refused or unreachable address. `headersFor` adds
 * (or replaces) headers of each request by its URL.
 */
export async function guardedFetch(
  url: string,
  accept: string,
  signal: AbortSignal,
  headersFor: (hop: URL) => Record<string, string> = () => ({}),
): Promise<FetchedResponse> {
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const response = await requestOnce(current, accept, signal, headersFor(current));
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location) {
      response.destroy();
      if (hop >= MAX_REDIRECTS) throw invalidUrl(`it redirects more than ${MAX_REDIRECTS} times`);
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw invalidUrl(`${current.href} redirects to an invalid address`);
      }
      if (next.protocol !== "http:" && next.protocol !== "https:") throw invalidUrl(`${current.href} redirects to a URL that is not http or https`);
      current = next;
      continue;
    }
    if (status >= 400 || status < 200) {
      response.destroy();
      throw invalidUrl(`${current.href} answered HTTP ${status}`);
    }
    const [type = "", ...parameters] = String(response.headers["content-type"] ?? "").split(";");
    const charset = parameters.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find((c) => c !== undefined);
    // Credentials given in the URL were sent (basic auth); the URL said back, and resolved against, holds none.
    return { url: withoutCredentials(current.href), status, mediaType: type.trim().toLowerCase(), charset, body: decode(response) };
  }
}
