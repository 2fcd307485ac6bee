// The customer's proxy, in process: the loopback proxies of dev/harness/proxies.ts (an HTTP proxy,
// a SOCKS5 proxy, one that never answers) in front of a loopback server, reached directly and
// through a render's guard session.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROXY_PASSWORD, PROXY_USER, startProxies, type TestProxies } from "../../../../dev/harness/proxies.js";
import { type GuardSession, openGuardSession } from "../../../../lib/render/guard/network-guard.js";
import { literalRefusal, ProxyFailure, parseProxy, tunnelThrough, type UpstreamProxy } from "../../../../lib/render/guard/upstream-proxy.js";

let proxies: TestProxies;
let site: http.Server;
let sitePort: number;
let closedPort: number;

beforeAll(async () => {
  proxies = await startProxies();
  site = http.createServer((request, response) => response.writeHead(200, { "content-type": "text/plain" }).end(`site saw ${request.url}`));
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  sitePort = (site.address() as net.AddressInfo).port;
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(() => {
  proxies.close();
  site.close();
});

const proxy = (protocol: "http:" | "socks5:", port: number, password = PROXY_PASSWORD): UpstreamProxy => ({
  protocol,
  hostname: "127.0.0.1",
  port,
  username: PROXY_USER,
  password,
});

/** GET / over a tunnel socket. */
function getOver(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ createConnection: () => socket, host: "127.0.0.1", port: sitePort, path: "/through", agent: false }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk));
        response.on("end", () => resolve(body));
      })
      .on("error", reject);
  });
}

describe("parseProxy and literalRefusal", () => {
  it("takes http, https and socks5 URLs with their credentials decoded, and a default port", () => {
    expect(parseProxy("http://ann:p%40ss@proxy.example:3128")).toEqual({
      protocol: "http:",
      hostname: "proxy.example",
      port: 3128,
      username: "ann",
      password: "p@ss",
    });
    expect(parseProxy("socks5://proxy.example")).toMatchObject({ protocol: "socks5:", port: 1080, username: "" });
    expect(parseProxy("https://[2001:db8::1]:8443")).toMatchObject({ protocol: "https:", hostname: "2001:db8::1", port: 8443 });
  });

  it("says what is wrong with anything else", () => {
    expect(parseProxy("ftp://proxy.example:21")).toBe("must be an http://, https:// or socks5:// URL");
    expect(parseProxy("proxy.example:3128")).toMatch(/must be (a URL|an http)/);
    expect(parseProxy("http://proxy.example:3128/path?x=1")).toBe("must be scheme://[user:pass@]host:port, nothing after the port");
    expect(parseProxy("http://a%zz:b@proxy.example:3128")).toBe("must percent-encode its username and password as UTF-8");
    expect(parseProxy("http://a:%ff@proxy.example:3128")).toBe("must percent-encode its username and password as UTF-8");
  });

  it("refuses a private, loopback or metadata literal before any connection; a name is checked when connecting", () => {
    for (const host of ["10.0.0.1", "169.254.169.254", "127.0.0.1", "[::1]", "192.168.1.1"]) {
      expect(literalRefusal(parseProxy(`http://${host}:3128`) as UpstreamProxy), host).toBe("a private address");
    }
    expect(literalRefusal(parseProxy("http://203.0.114.7:3128") as UpstreamProxy)).toBeNull();
    expect(literalRefusal(parseProxy("http://proxy.example:3128") as UpstreamProxy)).toBeNull();
  });
});

describe("tunnelThrough", () => {
  it("opens a tunnel through an HTTP proxy (CONNECT) and a SOCKS5 proxy, with their credentials", async () => {
    const before = proxies.proxied().length;
    for (const [protocol, port] of [
      ["http:", proxies.http],
      ["socks5:", proxies.socks],
    ] as const) {
      const socket = await tunnelThrough(proxy(protocol, port), "127.0.0.1", "127.0.0.1", sitePort, 5_000);
      expect(await getOver(socket)).toBe("site saw /through");
    }
    expect(proxies.proxied().slice(before)).toEqual([
      { via: "http", target: `127.0.0.1:${sitePort}` },
      { via: "socks", target: `127.0.0.1:${sitePort}` },
    ]);
  });

  it("names the proxy's failure: wrong credentials (auth), a closed port (refused), no answer (timeout)", async () => {
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => null,
        (error: unknown) => error as ProxyFailure,
      );
    for (const protocol of ["http:", "socks5:"] as const) {
      const wrong = await failure(
        tunnelThrough(proxy(protocol, protocol === "http:" ? proxies.http : proxies.socks, "wrong"), "127.0.0.1", "127.0.0.1", sitePort, 5_000),
      );
      expect(wrong).toBeInstanceOf(ProxyFailure);
      expect(wrong?.kind, protocol).toBe("auth");
    }
    expect((await failure(tunnelThrough(proxy("http:", closedPort), "127.0.0.1", "127.0.0.1", sitePort, 5_000)))?.kind).toBe("refused");
    const started = Date.now();
    const silent = await failure(tunnelThrough(proxy("socks5:", proxies.silent), "127.0.0.1", "127.0.0.1", sitePort, 300));
    expect(silent?.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("an https:// proxy", () => {
  it("speaks TLS to the proxy, its certificate verified against the trusted CAs: untrusted is the proxy's failure, trusted tunnels", async () => {
    // A self-signed certificate for localhost, in front of the HTTP proxy.
    const dir = mkdtempSync(path.join(tmpdir(), "shotline-proxy-tls-"));
    const [keyFile, certFile] = ["key.pem", "cert.pem"].map((file) => path.join(dir, file));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-keyout",
        keyFile!,
        "-out",
        certFile!,
      ],
      { stdio: "ignore" },
    );
    const [key, cert] = [keyFile!, certFile!].map((file) => readFileSync(file, "utf8"));
    const front = tls.createServer({ key, cert }, (socket) => {
      const behind = net.connect(proxies.http, "127.0.0.1");
      socket.on("error", () => behind.destroy());
      behind.on("error", () => socket.destroy());
      socket.pipe(behind).pipe(socket);
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const port = (front.address() as net.AddressInfo).port;
    const https: UpstreamProxy = { ...proxy("http:", port), protocol: "https:", hostname: "localhost" };
    try {
      const untrusted = await tunnelThrough(https, "127.0.0.1", "127.0.0.1", sitePort, 5_000).then(
        () => null,
        (error: unknown) => error as ProxyFailure,
      );
      expect(untrusted).toBeInstanceOf(ProxyFailure);
      expect(untrusted?.message).toMatch(/the proxy could not be reached \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);
      tls.setDefaultCACertificates([...tls.getCACertificates("default"), cert!]);
      const socket = await tunnelThrough(https, "127.0.0.1", "127.0.0.1", sitePort, 5_000);
      expect(await getOver(socket)).toBe("site saw /through");
    } finally {
      front.close();
    }
  });
});

describe("a guard session through the customer's proxy", () => {
  const allowed = () => ({ allowed: new Set([proxies.http, proxies.socks, sitePort].map((port) => `127.0.0.1:${port}`)), explain: true });
  /** A plain-HTTP GET of the site through the guard (as the browser sends one to its proxy). */
  const viaGuard = (guard: GuardSession) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(guard.proxyServer);
      http
        .get({ host: "127.0.0.1", port, path: `http://127.0.0.1:${sitePort}/plain`, agent: false }, (response) => {
          let body = "";
          response.on("data", (chunk: Buffer) => (body += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        })
        .on("error", reject);
    });

  it("sends plain HTTP in absolute form to an HTTP proxy, and through a SOCKS5 tunnel; wrong credentials are the proxy's failure", async () => {
    for (const protocol of ["http:", "socks5:"] as const) {
      const guard = await openGuardSession(allowed());
      try {
        guard.useProxy(proxy(protocol, protocol === "http:" ? proxies.http : proxies.socks), 5_000);
        expect(await viaGuard(guard)).toEqual({ status: 200, body: "site saw /plain" });
        expect(guard.proxyFailure()).toBeNull();
      } finally {
        await guard.close();
      }
      const wrong = await openGuardSession(allowed());
      try {
        wrong.useProxy(proxy(protocol, protocol === "http:" ? proxies.http : proxies.socks, "wrong"), 5_000);
        expect((await viaGuard(wrong)).status).toBe(502);
        expect(wrong.proxyFailure()?.kind, protocol).toBe("auth");
        expect(wrong.failures.get(`127.0.0.1:${sitePort}`)).toMatch(/credentials.*\(proxy 127\.0\.0\.1:\d+\)$/);
        expect(JSON.stringify([...wrong.failures])).not.toContain("wrong");
      } finally {
        await wrong.close();
      }
    }
  });

  it("still refuses a private literal address in a URL: the proxy is never asked for it", async () => {
    const guard = await openGuardSession(allowed());
    try {
      guard.useProxy(proxy("http:", proxies.http), 5_000);
      const before = proxies.proxied().length;
      const { port } = new URL(guard.proxyServer);
      const status = await new Promise<number>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path: "http://10.0.0.1/secret", agent: false }, (response) => resolve(response.statusCode ?? 0))
          .on("error", reject);
      });
      expect(status).toBe(502);
      expect(guard.failures.get("10.0.0.1:80")).toMatch(/^refused 10\.0\.0\.1:80: .*private/);
      expect(guard.proxyFailure()).toBeNull();
      expect(proxies.proxied().length).toBe(before);
    } finally {
      await guard.close();
    }
  });

  it("refuses a proxy whose address the guard does not allow, before connecting to it", async () => {
    const guard = await openGuardSession({ allowed: new Set([`127.0.0.1:${sitePort}`]), explain: false });
    try {
      guard.useProxy(proxy("http:", proxies.http), 5_000);
      const before = proxies.proxied().length;
      expect((await viaGuard(guard)).status).toBe(502);
      expect(guard.proxyFailure()).toMatchObject({ kind: "refused", message: expect.stringContaining("refused by the network guard") });
      expect(proxies.proxied().length).toBe(before);
    } finally {
      await guard.close();
    }
  });
});
