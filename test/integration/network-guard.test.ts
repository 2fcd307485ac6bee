// Hostile requests through the whole local stack. A canary server on loopback (IPv4 and IPv6) is not
// in ALLOWED_PRIVATE_HOSTS: every case must leave it untouched, whatever the page tries.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { canaryHits, type ErrorBody, postJson } from "../helpers/api.js";

const port = inject("canaryPort");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const canary = inject("canaryUrl");

// The canary does count: a request made directly from the test (not through a render) is seen.
beforeAll(async () => {
  await fetch(`${canary}/control-probe`);
  expect(await canaryHits()).toContain("GET /control-probe HTTP/1.1");
});

afterAll(async () => {
  expect((await canaryHits()).filter((hit) => hit !== "GET /control-probe HTTP/1.1")).toEqual([]);
});

describe("top-level URLs that reach private addresses are refused with INVALID_URL", () => {
  // Off Lambda the refusal says how to allow the page in local development.
  const REFUSED = /refused (\S+): a private address \(for local development, start the service with ALLOWED_PRIVATE_HOSTS=\1\)/;
  const cases: [name: string, url: string, reason?: RegExp][] = [
    ["loopback IPv4", `http://127.0.0.1:${port}/`],
    ["another loopback IPv4", `http://127.0.0.2:${port}/`],
    ["localhost", `http://localhost:${port}/`],
    // getaddrinfo here does not resolve "localhost." at all; either way nothing is reached.
    ["LOCALHOST with a trailing dot", `http://LOCALHOST.:${port}/`, /refused|could not resolve host localhost\./],
    ["loopback IPv6", `http://[::1]:${port}/`],
    ["IPv4-mapped IPv6", `http://[::ffff:127.0.0.1]:${port}/`],
    ["IPv4-mapped IPv6 in hex", `http://[::ffff:7f00:1]:${port}/`],
    ["hex IPv4", `http://0x7f000001:${port}/`],
    ["decimal IPv4", `http://2130706433:${port}/`],
    ["octal IPv4", `http://0177.0.0.1:${port}/`],
    ["short IPv4", `http://127.1:${port}/`],
    ["unspecified 0.0.0.0", `http://0.0.0.0:${port}/`],
    ["unspecified IPv6", `http://[::]:${port}/`],
    ["https to loopback (CONNECT)", `https://127.0.0.1:${port}/`],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["private 10/8", "http://10.0.0.1/"],
    ["private 172.16/12", "http://172.16.5.4/"],
    ["private 192.168/16", "http://192.168.1.1/"],
    ["CGNAT 100.64/10", "http://100.64.0.1/"],
    ["multicast", "http://224.0.0.1/"],
    ["broadcast", "http://255.255.255.255/"],
    ["IPv6 link-local", "http://[fe80::1]/"],
    ["IPv6 unique local (EC2 metadata over IPv6)", "http://[fd00:ec2::254]/"],
    ["NAT64 of loopback", "http://[64:ff9b::7f00:1]/"],
    ["6to4 of loopback", "http://[2002:7f00:1::]/"],
    ["redirect to loopback", fixture(`/redirect?to=${encodeURIComponent(`${canary}/from-redirect`)}`)],
    ["redirect to localhost over https", fixture(`/redirect?to=${encodeURIComponent(`https://localhost:${port}/`)}`)],
  ];

  for (const [name, url, reason = REFUSED] of cases) {
    it(name, async () => {
      const res = await postJson("/api/v1/screenshot", { url, deviceScaleFactor: 1, width: 320 });
      expect(res.status).toBe(422);
      const { error } = (await res.json()) as ErrorBody;
      expect(error.code).toBe("INVALID_URL");
      expect(error.message).toMatch(reason);
    });
  }

  it("a name that resolves to a private address is refused without saying which (no DNS oracle), on every route that fetches", async () => {
    // localhost resolves to 127.0.0.1 and ::1 here: the answer names the host asked for, never what it resolved to.
    const resolved = /127\.0\.0\.1|::1|\[::|0:0:0:0/;
    const url = `http://localhost:${port}/oracle`;
    for (const [path, body] of [
      ["/api/v1/screenshot", { url, deviceScaleFactor: 1, width: 320 }],
      ["/api/v1/metadata", { url }],
      ["/api/v1/screenshot", { url: fixture(`/redirect?to=${encodeURIComponent(url)}`), deviceScaleFactor: 1, width: 320 }],
    ] as const) {
      const res = await postJson(path, body);
      expect(res.status, path).toBe(422);
      const { error } = (await res.json()) as ErrorBody;
      expect(error.message, path).toContain(`refused localhost:${port}: a private address`);
      expect(error.message, path).not.toMatch(resolved);
    }
    // Refused before any connection: the canary saw nothing (afterAll checks every case of the file).
    expect((await canaryHits()).filter((hit) => hit.includes("/oracle"))).toEqual([]);
  });

  it("a redirect to a file: URL", async () => {
    const res = await postJson("/api/v1/screenshot", { url: fixture(`/redirect?to=${encodeURIComponent("file:///etc/passwd")}`) });
    expect(res.status).toBe(422);
  });

  it.each(["file:///etc/passwd", "chrome://version", "javascript:alert(1)", "data:text/html,<h1>x</h1>", "view-source:http://example.com"])(
    "a non-http(s) top-level URL (%s) is refused before any navigation",
    async (url) => {
      const res = await postJson("/api/v1/screenshot", { url });
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.code).toBe("INVALID_PARAMS");
    },
  );
});

describe("subresources aimed at private addresses are dropped, and the page still renders", () => {
  it("images, stylesheets, scripts, iframes, fetch, XHR, websockets, event sources and beacons (URL mode)", async () => {
    const res = await postJson("/api/v1/screenshot", { url: fixture("/hostile"), width: 320, deviceScaleFactor: 1, delay: 500 });
    expect(res.status).toBe(200);
  });

  it("a meta refresh and a script redirect to loopback", async () => {
    for (const path of ["/meta-refresh", "/js-redirect"]) {
      const res = await postJson("/api/v1/screenshot", { url: fixture(path), width: 320, deviceScaleFactor: 1, delay: 500 });
      // Captured before the redirect, or refused with the guard's reason once the page tried to leave.
      expect([200, 422], path).toContain(res.status);
    }
  });

  it("every kind of request from raw HTML", async () => {
    const html = `<h1>hostile html</h1>
<img src="${canary}/html-img"><img src="http://[::1]:${port}/html-img6"><link rel="stylesheet" href="http://localhost:${port}/css">
<iframe src="${canary}/html-iframe"></iframe><iframe src="file:///etc/passwd"></iframe>
<video src="${canary}/video" autoplay></video><object data="${canary}/object"></object>
<script>fetch("${canary}/html-fetch").catch(() => {}); const x = new XMLHttpRequest(); x.open("GET", "http://0x7f000001:${port}/xhr"); x.send();
try { new WebSocket("ws://127.0.0.1:${port}/ws"); new WebSocket("wss://localhost:${port}/wss"); } catch (e) {}
new Image().src = "http://2130706433:${port}/decimal";</script>`;
    const res = await postJson("/api/v1/html-to-screenshot", { html, width: 320, deviceScaleFactor: 1, delay: 500 });
    expect(res.status).toBe(200);
  });

  it("raw HTML cannot read local files into the capture", async () => {
    const html = `<body><script>fetch("file:///etc/passwd").then(r => r.text()).then(t => document.body.textContent = t).catch(() => document.body.textContent = "blocked");</script></body>`;
    const res = await postJson("/api/v1/html-to-screenshot", { html, width: 320, deviceScaleFactor: 1, responseFormat: "json", delay: 300 });
    expect(res.status).toBe(200);
    const { title } = (await res.json()) as { title: string };
    expect(title).not.toContain("root:");
  });
});
