import http from "node:http";
import net from "node:net";

// Proxies of "the customer's" on loopback, in front of the fixtures (test/integration/proxy.test.ts):
// an HTTP proxy (CONNECT and absolute-form requests) and a SOCKS5 proxy, both asking for
// PROXY_USER:PROXY_PASSWORD, and a proxy that accepts connections and never answers. They forward
// only to loopback, and keep what they were asked for: GET /__proxied on the fixture server.

export const PROXY_USER = "proxyuser";
export const PROXY_PASSWORD = "proxy-secret-42";

/** What went through a proxy: which one, the target, and whether the credentials were right. */
export interface Proxied {
  readonly via: "http" | "socks";
  readonly target: string;
}

export interface TestProxies {
  readonly http: number;
  readonly socks: number;
  readonly silent: number;
  proxied(): readonly Proxied[];
  close(): void;
}

/**
 * The credentials taken, as proxy providers take them: the account's user and password, with any
 * targeting the provider reads after them ("-country-de" on the user, "_country-jp" on the password).
 */
const accepted = (user: string, pass: string) => user.split("-")[0] === PROXY_USER && pass.split("_")[0] === PROXY_PASSWORD;
const acceptedBasic = (header: string | undefined) => {
  const [scheme, token = ""] = (header ?? "").split(" ");
  const decoded = Buffer.from(token, "base64").toString();
  const colon = decoded.indexOf(":");
  return scheme === "Basic" && colon > 0 && accepted(decoded.slice(0, colon), decoded.slice(colon + 1));
};
const loopback = (host: string) => host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "[::1]";

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

/** Starts the three proxies on 127.0.0.1. */
export async function startProxies(): Promise<TestProxies> {
  const seen: Proxied[] = [];
  const sockets = new Set<net.Socket>();
  const keep = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => sockets.delete(socket));
    return socket;
  };

  const httpProxy = http.createServer((request, response) => {
    if (!acceptedBasic(request.headers["proxy-authorization"])) return void response.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
    const url = URL.canParse(request.url ?? "") ? new URL(request.url!) : null;
    if (!url || !loopback(url.hostname)) return void response.writeHead(403).end();
    seen.push({ via: "http", target: url.href });
    const { "proxy-authorization": _, ...headers } = request.headers;
    const upstream = http.request({ host: url.hostname, port: url.port, method: request.method, path: `${url.pathname}${url.search}`, headers }, (reply) => {
      response.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(response);
    });
    upstream.on("error", () => response.writeHead(502).end());
    request.pipe(upstream);
  });
  httpProxy.on("connection", keep);
  httpProxy.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    keep(client);
    if (!acceptedBasic(request.headers["proxy-authorization"])) {
      return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
    }
    const [, host = "", port = "0"] = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? "") ?? [];
    if (!loopback(host)) return void client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    seen.push({ via: "http", target: request.url ?? "" });
    const upstream = keep(net.connect(Number(port), host.replace(/^\[|\]$/g, "")));
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
  });

  // SOCKS5 (RFC 1928) with username and password (RFC 1929), CONNECT only.
  const socks = net.createServer((client) => {
    keep(client);
    let stage: "greeting" | "auth" | "request" | "open" = "greeting";
    let buffer = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      if (stage === "open") return;
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === "greeting" && buffer.length >= 2 && buffer.length >= 2 + buffer[1]!) {
        const methods = [...buffer.subarray(2, 2 + buffer[1]!)];
        buffer = buffer.subarray(2 + buffer[1]!);
        if (!methods.includes(2)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 2]));
        stage = "auth";
      }
      if (stage === "auth" && buffer.length >= 2) {
        const userLength = buffer[1]!;
        if (buffer.length < 3 + userLength || buffer.length < 3 + userLength + buffer[2 + userLength]!) return;
        const user = buffer.subarray(2, 2 + userLength).toString();
        const passLength = buffer[2 + userLength]!;
        const pass = buffer.subarray(3 + userLength, 3 + userLength + passLength).toString();
        buffer = buffer.subarray(3 + userLength + passLength);
        if (!accepted(user, pass)) return void client.end(Buffer.from([1, 1]));
        client.write(Buffer.from([1, 0]));
        stage = "request";
      }
      if (stage === "request" && buffer.length >= 5) {
        const kind = buffer[3];
        const length = kind === 1 ? 4 : kind === 4 ? 16 : 1 + buffer[4]!;
        if (buffer.length < 4 + length + 2) return;
        const host = kind === 1 ? [...buffer.subarray(4, 8)].join(".") : kind === 3 ? buffer.subarray(5, 5 + buffer[4]!).toString() : "::1";
        const port = buffer.readUInt16BE(4 + length);
        const rest = buffer.subarray(4 + length + 2);
        stage = "open";
        if (!loopback(host)) return void client.end(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
        seen.push({ via: "socks", target: `${host}:${port}` });
        const upstream = keep(net.connect(port, host));
        upstream.once("connect", () => {
          client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
          if (rest.length) upstream.write(rest);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.once("error", () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
      }
    });
  });

  // Takes the connection and says nothing, for ever.
  const silent = net.createServer(keep);

  const ports = { http: await listen(httpProxy), socks: await listen(socks), silent: await listen(silent) };
  return {
    ...ports,
    proxied: () => [...seen],
    close: () => {
      for (const socket of sockets) socket.destroy();
      for (const server of [httpProxy, socks, silent]) server.close();
    },
  };
}
