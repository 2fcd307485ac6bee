import { lookup } from "node:dns/promises";
import http from "node:http";
import net from "node:net";
import { refusalReason } from "./address-policy.js";
import { connectToProxy, ProxyFailure, proxyAuthorization, TargetFailure, tunnelThrough, type UpstreamProxy } from "./upstream-proxy.js";

// An in-process forward proxy through which the browser makes every request of one render:
// documents, subresources, redirects, iframes, fetch/XHR and websockets. It resolves names itself,
// refuses anything that is not a public address, and connects to the very address it checked, so a
// DNS answer cannot change between the check and the connection (no DNS rebinding).

/** One render's proxy: where the browser context sends its traffic, and what it refused. */
export interface GuardSession {
  /** e.g. "http://127.0.0.1:41234", for the browser context's proxyServer. */
  readonly proxyServer: string;
  /** Why requests to a `host:port` failed (refused, unresolvable, unreachable), first reason per target. */
  readonly failures: ReadonlyMap<string, string>;
  /** Fires when the page's traffic passed one of its limits; the reason says which ("it made more than 1500 requests"). */
  readonly tripped: AbortSignal;
  /** Sends every connection from now on through the customer's proxy (lib/render/guard/upstream-proxy.ts), each within `handshakeMs`. */
  useProxy(proxy: UpstreamProxy, handshakeMs: number): void;
  /** The first failure of that proxy itself (refused, credentials, time), if any. */
  proxyFailure(): ProxyFailure | null;
  close(): Promise<void>;
}

/** Where a connection to a target may go: the checked address, or why not (`refused`: by policy, else unresolvable). */
type Target = { ok: true; address: string } | { ok: false; reason: string; refused: boolean };

/** `host:port` as a URL writes it (IPv6 in brackets), lower-case: the key of ALLOWED_PRIVATE_HOSTS and of failures. */
export const targetKey = (hostname: string, port: number) => {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
};

/** Private targets let through (ALLOWED_PRIVATE_HOSTS), and whether a refusal says how to let one through (off Lambda). */
export interface PrivateHosts {
  readonly allowed: ReadonlySet<string>;
  readonly explain: boolean;
}

/** A name's addresses: the system's resolver by default (getaddrinfo, /etc/hosts included). */
type LookupAll = (host: string) => Promise<string[]>;
const systemLookup: LookupAll = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Resolves `hostname` (with `lookupAll`) and picks a public address to connect to (or an allowed private target's first address). */
export async function resolveTarget(hostname: string, port: number, { allowed, explain }: PrivateHosts, lookupAll = systemLookup): Promise<Target> {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (net.isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await lookupAll(host);
    } catch {
      return { ok: false, reason: `could not resolve host ${host}`, refused: false };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `could not resolve host ${host}`, refused: false };
  if (allowed.has(targetKey(host, port))) return { ok: true, address: addresses[0]! };
  const publicAddress = addresses.find((a) => refusalReason(a) === null);
  if (publicAddress) return { ok: true, address: publicAddress };
  const key = targetKey(host, port);
  const how = explain ? ` (for local development, start the service with ALLOWED_PRIVATE_HOSTS=${key})` : "";
  return { ok: false, reason: `refused ${key}: ${refusalReason(addresses[0]!)}${how}`, refused: true };
}

// Hop-by-hop headers a proxy must not forward (RFC 9110 7.6.1) plus the browser's proxy headers.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** What one render's traffic may add up to (docs/api.md, "Network guard"); past any of them the render fails. */
export interface GuardLimits {
  /** Requests and tunnels opened, in all. */
  readonly requests: number;
  /** Tunnels and upstream requests open at once. */
  readonly openConnections: number;
  /** Bytes received from upstream servers, in all. */
  readonly bytes: number;
}

let liveSessions = 0;

/** Guard sessions opened and not yet closed, in this process. */
export const openGuardSessions = () => liveSessions;

export const DEFAULT_GUARD_LIMITS: GuardLimits = { requests: 1_500, openConnections: 64, bytes: 256 * 1024 * 1024 };

/** A status line and headers Node can write and a browser accepts; null when the upstream answer is unusable (status 000, 099, 600+). */
function forwardable(reply: http.IncomingMessage): { status: number; message: string | undefined; headers: http.OutgoingHttpHeaders } | null {
  const status = reply.statusCode ?? 0;
  if (!Number.isInteger(status) || status < 200 || status > 599) return null;
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    if (HOP_BY_HOP.has(name) || value === undefined) continue;
    try {
      http.validateHeaderName(name);
      for (const one of [value].flat()) http.validateHeaderValue(name, one);
    } catch {
      continue; // a header Node would refuse to write is dropped, not thrown
    }
    headers[name] = value;
  }
  // A reason phrase with control characters is replaced by the standard one.
  const message = /^[\t\x20-\x7e\x80-\xff]*$/.test(reply.statusMessage ?? "") ? reply.statusMessage : undefined;
  return { status, message, headers };
}

/** Ends a proxied answer with a plain status when nothing was sent yet, else cuts it. Never throws. */
function failAnswer(response: http.ServerResponse, status: number, reason: string) {
  try {
    if (!response.headersSent) response.writeHead(status, { "content-type": "text/plain", "x-shotline-guard": reason }).end(reason);
    else response.destroy();
  } catch {
    response.destroy();
  }
}

/**
 * Opens a guard proxy on 127.0.0.1 for one render. `allowed`: exact private `host:port` targets
 * (lower-case) let through. Nothing an upstream server sends can throw out of it: a status line
 * or header Node cannot forward becomes a 502 to the page. Upstream connections belong to this
 * render alone (its own agent, destroyed with it). Past a limit every further request is refused
 * and `tripped` fires with the reason.
 */
export async function openGuardSession(privateHosts: PrivateHosts, limits: GuardLimits = DEFAULT_GUARD_LIMITS): Promise<GuardSession> {
  const failures = new Map<string, string>();
  const sockets = new Set<net.Socket>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const trip = new AbortController();
  let requests = 0;
  let open = 0;
  let bytes = 0;
  const fail = (key: string, reason: string) => {
    if (!failures.has(key)) failures.set(key, reason);
  };
  const track = (socket: net.Socket) => {
    // A kept-alive upstream socket is handed to every request it serves: listen once.
    if (sockets.has(socket)) return socket;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    return socket;
  };
  /** Counts a new request or tunnel; false (and `tripped` fires) when it would pass a limit. */
  const admit = (): boolean => {
    if (trip.signal.aborted) return false;
    if (requests >= limits.requests) trip.abort(`it made more than ${limits.requests} requests`);
    else if (open >= limits.openConnections) trip.abort(`it held more than ${limits.openConnections} connections open at once`);
    else {
      requests++;
      open++;
      return true;
    }
    return false;
  };
  let viaProxy: { proxy: UpstreamProxy; handshakeMs: number } | null = null;
  let proxyFailed: ProxyFailure | null = null;

  /**
   * Through the customer's proxy: a socket to `host:port` (a tunnel), or with `direct` a connection
   * to an HTTP(S) proxy itself for a request in absolute form. The target is not resolved here (the
   * proxy resolves names) but a literal address must pass the policy; the proxy's own address is
   * resolved and checked at every connection, and connected to as checked.
   */
  async function throughProxy(key: string, host: string, port: number, direct: boolean): Promise<net.Socket | null> {
    const { proxy, handshakeMs } = viaProxy!;
    const bare = host.toLowerCase().replace(/^\[|\]$/g, "");
    if (net.isIP(bare) && !privateHosts.allowed.has(key) && refusalReason(bare)) {
      fail(key, `refused ${key}: ${refusalReason(bare)}`);
      return null;
    }
    const address = await resolveTarget(proxy.hostname, proxy.port, privateHosts);
    try {
      if (!address.ok) {
        throw new ProxyFailure(
          address.refused ? "refused" : "unreachable",
          address.refused ? `the proxy's address is refused by the network guard (${address.reason})` : `the proxy's host could not be resolved`,
        );
      }
      return direct ? await connectToProxy(proxy, address.address, handshakeMs) : await tunnelThrough(proxy, address.address, bare, port, handshakeMs);
    } catch (error) {
      if (error instanceof ProxyFailure) {
        failedByProxy(key, error);
      } else {
        fail(key, error instanceof TargetFailure ? error.message : `could not connect to ${key} through the proxy: ${(error as Error).message}`);
      }
      return null;
    }
  }

  /** The request to `key` failed because the proxy did: the first such failure is the render's. */
  const failedByProxy = (key: string, failure: ProxyFailure) => {
    proxyFailed ??= failure;
    fail(key, `${failure.message} (proxy ${targetKey(viaProxy!.proxy.hostname, viaProxy!.proxy.port)})`);
  };

  const received = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > limits.bytes && !trip.signal.aborted) trip.abort(`it downloaded more than ${Math.round(limits.bytes / 1024 / 1024)} MB`);
  };

  const server = http.createServer((request, response) => {
    void proxy(request, response).catch(() => failAnswer(response, 502, "error"));
  });

  async function proxy(request: http.IncomingMessage, response: http.ServerResponse) {
    response.on("error", () => response.destroy());
    request.on("error", () => response.destroy());
    // A plain-HTTP proxy request carries the absolute URL.
    let url: URL;
    try {
      url = new URL(request.url ?? "");
    } catch {
      return failAnswer(response, 400, "absolute URL required");
    }
    if (url.protocol !== "http:") return failAnswer(response, 400, "only http: is proxied without CONNECT");
    if (!admit()) return failAnswer(response, 429, "limit");
    response.once("close", () => open--);
    const port = Number(url.port || 80);
    const key = targetKey(url.hostname, port);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    if (viaProxy) {
      const { proxy } = viaProxy;
      const socket = await throughProxy(key, url.hostname, port, proxy.protocol !== "socks5:");
      if (!socket) return failAnswer(response, 502, "proxy");
      track(socket);
      const authorization = proxyAuthorization(proxy);
      // To an HTTP(S) proxy the request goes in absolute form with its credentials; through a SOCKS tunnel, as to the site.
      const viaHttp = proxy.protocol !== "socks5:";
      if (viaHttp && authorization) headers["proxy-authorization"] = authorization;
      return forward(request, response, key, {
        // The handshake left the socket paused; the site says nothing before it is asked.
        createConnection: () => socket.resume(),
        method: request.method,
        path: viaHttp ? url.href : `${url.pathname}${url.search}`,
        headers,
        setHost: false,
      });
    }
    const target = await resolveTarget(url.hostname, port, privateHosts);
    if (!target.ok) {
      fail(key, target.reason);
      return failAnswer(response, target.refused ? 403 : 502, "refused");
    }
    forward(request, response, key, {
      host: target.address,
      port,
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent,
    });
  }

  /** Sends the page's plain-HTTP `request` upstream as `options` say, and its answer back to the page. */
  function forward(request: http.IncomingMessage, response: http.ServerResponse, key: string, options: http.RequestOptions) {
    const upstream = http.request(options);
    upstream.on("socket", track);
    upstream.on("response", (reply) => {
      // An HTTP(S) proxy that refused the credentials of a request in absolute form.
      if (reply.statusCode === 407 && viaProxy && options.path?.startsWith("http")) {
        failedByProxy(key, new ProxyFailure("auth", "the proxy refused its credentials (407 Proxy Authentication Required)"));
        reply.destroy();
        return failAnswer(response, 502, "proxy");
      }
      reply.on("error", () => response.destroy());
      reply.on("data", received);
      const answer = forwardable(reply);
      if (!answer) {
        fail(key, `${key} answered an invalid status line (${reply.statusCode})`);
        reply.destroy();
        return failAnswer(response, 502, "invalid-response");
      }
      try {
        response.writeHead(answer.status, answer.message, answer.headers);
      } catch {
        reply.destroy();
        return failAnswer(response, 502, "invalid-response");
      }
      reply.pipe(response);
    });
    // 101 Switching Protocols to a plain request: nothing to forward.
    upstream.on("upgrade", (_reply, socket) => {
      fail(key, `${key} sent an answer that is not valid HTTP (101 Switching Protocols to a plain request)`);
      socket.destroy();
      failAnswer(response, 502, "invalid-response");
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      // Node's parser names what it refused (HPE_HEADER_OVERFLOW, HPE_UNEXPECTED_CONTENT_LENGTH...).
      const code = error.code ?? error.message;
      fail(key, code.startsWith("HPE_") ? `${key} sent an answer that is not valid HTTP (${code})` : `could not connect to ${key}: ${code}`);
      failAnswer(response, 502, "unreachable");
    });
    response.once("close", () => upstream.destroy());
    request.pipe(upstream);
  }

  // https:, wss: and (through Chromium) ws: are tunnelled with CONNECT host:port.
  server.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    void tunnel(request, client, head).catch(() => client.destroy());
  });

  async function tunnel(request: http.IncomingMessage, client: net.Socket, head: Buffer) {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? "");
    if (!match) return void client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    if (!admit()) return void client.end("HTTP/1.1 429 Too Many Requests\r\n\r\n");
    client.once("close", () => open--);
    const port = Number(match[2]);
    const key = targetKey(match[1]!, port);
    if (viaProxy) {
      const socket = await throughProxy(key, match[1]!, port, false);
      if (!socket) return void client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      track(socket);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      return splice(client, socket, head, key);
    }
    const target = await resolveTarget(match[1]!, port, privateHosts);
    if (!target.ok) {
      fail(key, target.reason);
      return void client.end(`HTTP/1.1 ${target.refused ? "403 Forbidden" : "502 Bad Gateway"}\r\n\r\n`);
    }
    const upstream = track(net.connect({ host: target.address, port }));
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      splice(client, upstream, head, key);
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      fail(key, `could not connect to ${key}: ${error.code ?? error.message}`);
      if (client.writable && !upstream.readable) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      client.destroy();
    });
    client.once("close", () => upstream.destroy());
  }

  /** Joins a page's tunnel to its upstream connection, counting what comes back. */
  function splice(client: net.Socket, upstream: net.Socket, head: Buffer, key: string) {
    if (head.length) upstream.write(head);
    upstream.on("data", received);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      fail(key, `the connection to ${key} failed: ${error.code ?? error.message}`);
      client.destroy();
    });
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  }

  // A plain ws:// upgrade sent to the proxy as an absolute URL is refused: websockets must tunnel.
  server.on("upgrade", (_request: http.IncomingMessage, client: net.Socket) => {
    track(client);
    client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  server.on("connection", track);
  // Closing the render stops everything at once: the limit's trip too.
  trip.signal.addEventListener("abort", () => {
    for (const socket of sockets) socket.destroy();
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  liveSessions++;
  let closed: Promise<void> | undefined;
  return {
    proxyServer: `http://127.0.0.1:${port}`,
    failures,
    tripped: trip.signal,
    useProxy: (proxy, handshakeMs) => {
      viaProxy = { proxy, handshakeMs };
    },
    proxyFailure: () => proxyFailed,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        liveSessions--;
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        server.close(() => resolve());
      })),
  };
}
