import net from "node:net";
import tls from "node:tls";
import { refusalReason } from "./address-policy.js";

// The customer's own proxy (docs/api.md, "Proxy"): the render's guard opens every connection of the
// page through it. HTTP and HTTPS proxies take CONNECT (and plain-HTTP requests in absolute form),
// SOCKS5 proxies a CONNECT with the host's name: the proxy resolves names. Its credentials stay
// here: the browser only ever talks to the guard, so nothing of them is cached between renders.

/** A proxy as a request names it. */
export interface UpstreamProxy {
  readonly protocol: "http:" | "https:" | "socks5:";
  readonly hostname: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
}

/** Which way a proxy failed (PROXY_ERROR's message names it). */
export type ProxyFailureKind = "refused" | "auth" | "timeout" | "unreachable";

/** A failure of the proxy itself (not of the site behind it). */
export class ProxyFailure extends Error {
  constructor(
    readonly kind: ProxyFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** The site behind the proxy could not be reached (the proxy said so): the page's failure, not the proxy's. */
export class TargetFailure extends Error {}

const DEFAULT_PORTS = { "http:": 80, "https:": 443, "socks5:": 1080 } as const;

/** `value` as a proxy, or why it is not one (a sentence for a 400). */
export function parseProxy(value: string): UpstreamProxy | string {
  if (!URL.canParse(value)) return 'must be a URL like "http://user:pass@host:port" (http, https or socks5)';
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:" && url.protocol !== "socks5:") return "must be an http://, https:// or socks5:// URL";
  if (!url.hostname) return "must name the proxy's host";
  if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash) return "must be scheme://[user:pass@]host:port, nothing after the port";
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return "must percent-encode its username and password as UTF-8";
  }
  if (url.protocol === "socks5:" && (username.length > 255 || password.length > 255)) return "a SOCKS5 username and password are at most 255 bytes each";
  return { protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) || DEFAULT_PORTS[url.protocol], username, password };
}

/** Why the proxy's own address is refused before any connection (a private or reserved literal address), or null. */
export function literalRefusal(proxy: UpstreamProxy): string | null {
  return net.isIP(proxy.hostname) ? refusalReason(proxy.hostname) : null;
}

/** The Proxy-Authorization header's value for `proxy`, if it has credentials. */
export const proxyAuthorization = (proxy: UpstreamProxy): string | undefined =>
  proxy.username || proxy.password ? `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString("base64")}` : undefined;

/** Reads from `socket` until `done` says how many bytes of what came are the answer; the rest is put back. */
function readAnswer(socket: net.Socket, done: (data: Buffer) => number | null, limit = 16 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const length = done(data);
      if (length === null) {
        if (data.length > limit) finish(new ProxyFailure("refused", "the proxy sent an answer too long to be one"));
        return;
      }
      finish(null, data.subarray(0, length));
      if (data.length > length) socket.unshift(data.subarray(length));
    };
    const onEnd = () => finish(new ProxyFailure("refused", "the proxy closed the connection"));
    const onError = (error: Error) => finish(error);
    const finish = (error: Error | null, answer?: Buffer) => {
      socket.off("data", onData).off("end", onEnd).off("error", onError);
      socket.pause();
      if (error) reject(error);
      else resolve(answer!);
    };
    socket.on("data", onData).once("end", onEnd).once("error", onError);
    socket.resume();
  });
}

/** Connects to the proxy at `address` (the address the guard checked), over TLS for an https:// proxy. */
function connectTo(proxy: UpstreamProxy, address: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket: net.Socket =
      proxy.protocol === "https:"
        ? tls.connect({ host: address, port: proxy.port, servername: net.isIP(proxy.hostname) ? undefined : proxy.hostname, ALPNProtocols: ["http/1.1"] })
        : net.connect({ host: address, port: proxy.port });
    const ready = proxy.protocol === "https:" ? "secureConnect" : "connect";
    socket.once(ready, () => {
      socket.off("error", fail);
      resolve(socket);
    });
    const fail = (error: NodeJS.ErrnoException) => {
      socket.destroy();
      const code = error.code ?? error.message;
      reject(
        new ProxyFailure(
          code === "ECONNREFUSED" ? "refused" : "unreachable",
          code === "ECONNREFUSED" ? "the proxy refused the connection" : `the proxy could not be reached (${code})`,
        ),
      );
    };
    socket.once("error", fail);
  });
}

/** Opens a tunnel through an HTTP(S) proxy to `host:port` with CONNECT. */
async function httpConnect(socket: net.Socket, proxy: UpstreamProxy, target: string): Promise<void> {
  const authorization = proxyAuthorization(proxy);
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${authorization ? `Proxy-Authorization: ${authorization}\r\n` : ""}\r\n`);
  const head = await readAnswer(socket, (data) => {
    const end = data.indexOf("\r\n\r\n");
    return end < 0 ? null : end + 4;
  });
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.toString("latin1"))?.[1] ?? 0);
  if (status >= 200 && status < 300) return;
  if (status === 407) throw new ProxyFailure("auth", "the proxy refused its credentials (407 Proxy Authentication Required)");
  if (status === 502 || status === 503 || status === 504) throw new TargetFailure(`the proxy could not reach ${target} (${status})`);
  throw new ProxyFailure("refused", status ? `the proxy refused to connect to ${target} (${status})` : "the proxy did not answer CONNECT with HTTP");
}

/** The 16 bytes of an IPv6 address (`::` shortening and a trailing IPv4 part allowed). */
function ipv6Bytes(address: string): Buffer {
  const groups = (part: string) =>
    part === ""
      ? []
      : part.split(":").flatMap((group) => {
          if (!group.includes(".")) return [Number.parseInt(group, 16)];
          const [a, b, c, d] = group.split(".").map(Number);
          return [(a! << 8) | b!, (c! << 8) | d!];
        });
  const [head = "", tail] = address.split("::");
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const all = [...before, ...Array.from({ length: 8 - before.length - after.length }, () => 0), ...after];
  return Buffer.from(all.flatMap((group) => [group >> 8, group & 255]));
}

// SOCKS5 (RFC 1928) and its username/password authentication (RFC 1929).
const SOCKS_REPLIES: Record<number, string> = {
  1: "a general failure of the proxy",
  2: "not allowed by the proxy's rules",
  3: "network unreachable",
  4: "host unreachable",
  5: "connection refused",
  6: "TTL expired",
  7: "command not supported",
  8: "address type not supported",
};

/** Opens a tunnel through a SOCKS5 proxy to `host:port`, the name resolved by the proxy. */
async function socksConnect(socket: net.Socket, proxy: UpstreamProxy, host: string, port: number): Promise<void> {
  const withPassword = proxy.username !== "" || proxy.password !== "";
  socket.write(Buffer.from(withPassword ? [5, 2, 0, 2] : [5, 1, 0]));
  const [version, method] = await readAnswer(socket, (data) => (data.length >= 2 ? 2 : null));
  if (version !== 5) throw new ProxyFailure("refused", "the proxy does not speak SOCKS5");
  if (method === 0xff) throw new ProxyFailure("auth", "the proxy accepts none of the ways to authenticate offered (none, username and password)");
  if (method === 2) {
    const user = Buffer.from(proxy.username);
    const pass = Buffer.from(proxy.password);
    socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
    const [, status] = await readAnswer(socket, (data) => (data.length >= 2 ? 2 : null));
    if (status !== 0) throw new ProxyFailure("auth", "the proxy refused its credentials (SOCKS5 username and password)");
  } else if (method !== 0) {
    throw new ProxyFailure("refused", `the proxy asked for an authentication method it was not offered (${method})`);
  }
  const kind = net.isIPv4(host) ? 1 : net.isIPv6(host) ? 4 : 3;
  const address =
    kind === 1
      ? Buffer.from(host.split(".").map(Number))
      : kind === 4
        ? ipv6Bytes(host)
        : Buffer.concat([Buffer.from([Buffer.byteLength(host)]), Buffer.from(host)]);
  const portBytes = Buffer.from([port >> 8, port & 255]);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0, kind]), address, portBytes]));
  const reply = await readAnswer(socket, (data) => {
    if (data.length < 5) return null;
    const length = data[3] === 1 ? 4 : data[3] === 4 ? 16 : data[3] === 3 ? 1 + data[4]! : -1;
    if (length < 0) return data.length;
    return data.length >= 4 + length + 2 ? 4 + length + 2 : null;
  });
  const code = reply[1]!;
  if (code === 0) return;
  const what = SOCKS_REPLIES[code] ?? `reply ${code}`;
  if (code >= 3 && code <= 6) throw new TargetFailure(`the proxy could not reach ${host}:${port}: ${what}`);
  throw new ProxyFailure("refused", `the proxy refused to connect to ${host}:${port}: ${what}`);
}

/**
 * A tunnel to `host:port` through `proxy` at `address`, within `timeoutMs` (connection and
 * handshake). Rejects with a ProxyFailure (the proxy's own) or a TargetFailure (the site's).
 */
export async function tunnelThrough(proxy: UpstreamProxy, address: string, host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return withinTime(timeoutMs, async (opened) => {
    const socket = opened(await connectTo(proxy, address));
    if (proxy.protocol === "socks5:") await socksConnect(socket, proxy, host, port);
    else await httpConnect(socket, proxy, net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`);
    return socket;
  });
}

/** A connection to the proxy itself, for a plain-HTTP request sent to it in absolute form (HTTP(S) proxies). */
export const connectToProxy = (proxy: UpstreamProxy, address: string, timeoutMs: number): Promise<net.Socket> =>
  withinTime(timeoutMs, async (opened) => opened(await connectTo(proxy, address)));

/** `work`'s socket within `timeoutMs`, or a timeout ProxyFailure; a socket opened (told with `opened`) by work that failed or came late is destroyed. */
async function withinTime(timeoutMs: number, work: (opened: (socket: net.Socket) => net.Socket) => Promise<net.Socket>): Promise<net.Socket> {
  let socket: net.Socket | undefined;
  let late = false;
  const opened = (s: net.Socket) => {
    socket = s;
    if (late) s.destroy();
    return s;
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work(opened),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ProxyFailure("timeout", `the proxy did not answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    late = true;
    socket?.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
