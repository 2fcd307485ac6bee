import { lookup } from "node:dns/promises";
import http from "node:http";
import net from "node:net";
import { refusalReason } from "./address-policy.js";

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
  close(): Promise<void>;
}

/** Where a connection to a target may go: the checked address, or why not (`refused`: by policy, else unresolvable). */
type Target = { ok: true; address: string } | { ok: false; reason: string; refused: boolean };

/** `host:port` as a URL writes it (IPv6 in brackets), lower-case: the key of ALLOWED_PRIVATE_HOSTS and of failures. */
export const targetKey = (hostname: string, port: number) => {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
};

/** Resolves `hostname` and picks a public address to connect to (or an allowed private target's first address). */
export async function resolveTarget(hostname: string, port: number, allowed: ReadonlySet<string>): Promise<Target> {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (net.isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: `could not resolve host ${host}`, refused: false };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `could not resolve host ${host}`, refused: false };
  if (allowed.has(targetKey(host, port))) return { ok: true, address: addresses[0]! };
  const publicAddress = addresses.find((a) => refusalReason(a) === null);
  if (publicAddress) return { ok: true, address: publicAddress };
  return { ok: false, reason: `refused ${targetKey(host, port)}: ${refusalReason(addresses[0]!)}`, refused: true };
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

/** Opens a guard proxy on 127.0.0.1 for one render. `allowed`: exact private `host:port` targets (lower-case) let through. */
export async function openGuardSession(allowed: ReadonlySet<string>): Promise<GuardSession> {
  const failures = new Map<string, string>();
  const sockets = new Set<net.Socket>();
  const fail = (key: string, reason: string) => {
    if (!failures.has(key)) failures.set(key, reason);
  };
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    return socket;
  };

  const server = http.createServer(async (request, response) => {
    // A plain-HTTP proxy request carries the absolute URL.
    let url: URL;
    try {
      url = new URL(request.url ?? "");
    } catch {
      response.writeHead(400).end("absolute URL required");
      return;
    }
    if (url.protocol !== "http:") {
      response.writeHead(400).end("only http: is proxied without CONNECT");
      return;
    }
    const port = Number(url.port || 80);
    const key = targetKey(url.hostname, port);
    const target = await resolveTarget(url.hostname, port, allowed);
    if (!target.ok) {
      fail(key, target.reason);
      response.writeHead(target.refused ? 403 : 502, { "content-type": "text/plain", "x-shotline-guard": "refused" }).end(target.reason);
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    const upstream = http.request({ host: target.address, port, method: request.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
    upstream.on("socket", track);
    upstream.on("response", (reply) => {
      const replyHeaders: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(reply.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) replyHeaders[name] = value;
      response.writeHead(reply.statusCode ?? 502, reply.statusMessage, replyHeaders);
      reply.pipe(response);
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      fail(key, `could not connect to ${key}: ${error.code ?? error.message}`);
      if (!response.headersSent) response.writeHead(502, { "x-shotline-guard": "unreachable" }).end();
      else response.destroy();
    });
    request.pipe(upstream);
  });

  // https:, wss: and (through Chromium) ws: are tunnelled with CONNECT host:port.
  server.on("connect", async (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    client.on("error", () => client.destroy());
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? "");
    if (!match) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const port = Number(match[2]);
    const key = targetKey(match[1]!, port);
    const target = await resolveTarget(match[1]!, port, allowed);
    if (!target.ok) {
      fail(key, target.reason);
      client.end(`HTTP/1.1 ${target.refused ? "403 Forbidden" : "502 Bad Gateway"}\r\n\r\n`);
      return;
    }
    const upstream = track(net.connect({ host: target.address, port }));
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      fail(key, `could not connect to ${key}: ${error.code ?? error.message}`);
      if (client.writable && !upstream.readable) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      client.destroy();
    });
    client.once("close", () => upstream.destroy());
  });

  // A plain ws:// upgrade sent to the proxy as an absolute URL is refused: websockets must tunnel.
  server.on("upgrade", (_request: http.IncomingMessage, client: net.Socket) => {
    client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  server.on("connection", track);

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    proxyServer: `http://127.0.0.1:${port}`,
    failures,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
