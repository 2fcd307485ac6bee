// The customer's proxy (docs/api.md, "Proxy") through the whole local stack: the loopback proxies
// of dev/harness/proxies.ts (allowed through the guard for the tests) in front of the fixtures.
// A proxied render's every request goes through the proxy; a proxy that refuses, will not take its
// credentials or never answers is 502 PROXY_ERROR naming which, free; a proxy on a private address
// is refused before any connection; a proxied render is cached apart from an unproxied one; a
// `country` gives the page the locale and time zone of a visitor there.
import { describe, expect, inject, it } from "vitest";
import { PROXY_PASSWORD, PROXY_USER, type Proxied } from "../../dev/harness/proxies.js";
import { type ErrorBody, postJson } from "../helpers/api.js";

const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const proxyUrl = (scheme: "http" | "socks5", port: number, password = PROXY_PASSWORD) => `${scheme}://${PROXY_USER}:${password}@127.0.0.1:${port}`;
let runs = 0;
const runId = () => `proxy-${Date.now()}-${runs++}`;
const proxied = async () => (await (await fetch(fixture("/__proxied"))).json()) as Proxied[];
const shoot = (fields: Record<string, unknown>) => postJson("/api/v1/screenshot", { width: 400, height: 300, deviceScaleFactor: 1, ...fields });

describe("proxy: the page seen through the customer's proxy", () => {
  it.each([
    ["http", "http"],
    ["socks5", "socks"],
  ] as const)(
    "%s: every request of the render goes through it (held against the site's own record); free of its credentials in the logs",
    async (scheme, via) => {
      const ports = inject("proxyPorts");
      const id = runId();
      const before = (await proxied()).length;
      const res = await shoot({
        url: fixture(`/logs/page?id=${id}`),
        proxy: proxyUrl(scheme, scheme === "http" ? ports.http : ports.socks),
        capture: { har: true, network: true },
      });
      expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
      expect(res.headers.get("x-charged-micro-usd")).toBe("5000");
      const through = (await proxied()).slice(before).filter((p) => p.target.includes(id) || via === "socks");
      expect(through.every((p) => p.via === via)).toBe(true);
      const seen = (await (await fetch(fixture(`/logs/seen?id=${id}`))).json()) as { path: string }[];
      expect(seen.length).toBeGreaterThanOrEqual(4);
      if (via === "http") {
        // In absolute form, each request by its URL: every request the site saw came through the proxy.
        for (const { path } of seen) expect(through.map((p) => new URL(p.target).pathname)).toContain(path);
      } else {
        // Through SOCKS, tunnels to the site: at least one, and only to the fixtures' host.
        expect(through.length).toBeGreaterThanOrEqual(1);
        expect(through.every((p) => p.target === new URL(inject("fixtureUrl")).host)).toBe(true);
      }
      for (const link of [res.headers.get("x-har-url"), res.headers.get("x-network-url")]) {
        const log = await (await fetch(link ?? "")).text();
        expect(log).not.toContain(PROXY_PASSWORD);
        expect(log).not.toContain(Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString("base64"));
      }
    },
  );

  it("credentials belong to one render: a wrong password right after the right one is 502 PROXY_ERROR (authentication), free", async () => {
    const ports = inject("proxyPorts");
    for (const [scheme, port] of [
      ["http", ports.http],
      ["socks5", ports.socks],
    ] as const) {
      const right = await shoot({ url: fixture("/logs/pixel.png?id=auth"), proxy: proxyUrl(scheme, port) });
      expect(right.status, scheme).toBe(200);
      const wrong = await shoot({ url: fixture("/logs/pixel.png?id=auth"), proxy: proxyUrl(scheme, port, "wrong-proxy-password") });
      expect(wrong.status, scheme).toBe(502);
      const body = (await wrong.json()) as ErrorBody;
      expect(body.error.code).toBe("PROXY_ERROR");
      expect(body.error.message).toMatch(/^The proxy failed \(authentication failed\): the proxy refused its credentials/);
      expect(body.error.message).not.toContain("wrong-proxy-password");
      expect(wrong.headers.get("x-charged-micro-usd")).toBe("0");
    }
  });

  it("a proxy that refuses the connection, or never answers: 502 PROXY_ERROR saying which, within the page-load limit, free", async () => {
    const refused = await shoot({ url: fixture("/logs/pixel.png?id=refused"), proxy: `http://127.0.0.1:${inject("closedPort")}` });
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as ErrorBody).error.message).toMatch(/^The proxy failed \(refused\): the proxy refused the connection/);
    expect(refused.headers.get("x-charged-micro-usd")).toBe("0");
    const started = Date.now();
    const silent = await shoot({ url: fixture("/logs/pixel.png?id=silent"), proxy: `socks5://127.0.0.1:${inject("proxyPorts").silent}` });
    expect(silent.status).toBe(502);
    expect(((await silent.json()) as ErrorBody).error.message).toMatch(/^The proxy failed \(timed out\): the proxy did not answer within \d+ s/);
    expect(silent.headers.get("x-charged-micro-usd")).toBe("0");
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("a proxy on a private, loopback or metadata address, or not a proxy URL: 400 before any connection, free", async () => {
    for (const [proxy, message] of [
      ["http://10.0.0.1:3128", /proxy: is refused: a private address/],
      ["socks5://169.254.169.254:1080", /proxy: is refused: a private address/],
      ["http://127.0.0.1:1", /proxy: is refused: a private address/],
      ["ftp://proxy.example:21", /proxy: must be an http:\/\/, https:\/\/ or socks5:\/\/ URL/],
      ["http://proxy.example:3128/x", /proxy: must be scheme:\/\/\[user:pass@\]host:port/],
    ] as const) {
      const res = await shoot({ url: fixture("/logs/pixel.png"), proxy });
      expect(res.status, proxy).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(message);
      expect(res.headers.get("x-charged-micro-usd")).toBeNull();
    }
  });

  it("a proxied render is cached under its proxy: never served to an unproxied request, or the reverse", async () => {
    const url = fixture(`/logs/pixel.png?id=${runId()}`);
    const proxy = proxyUrl("http", inject("proxyPorts").http);
    const cache = (fields: Record<string, unknown>) => shoot({ url, cacheTtl: 600, ...fields });
    expect((await cache({ proxy })).headers.get("x-cache")).toBe("MISS");
    expect((await cache({})).headers.get("x-cache")).toBe("MISS");
    expect((await cache({ proxy })).headers.get("x-cache")).toBe("HIT");
    expect((await cache({})).headers.get("x-cache")).toBe("HIT");
  });

  it("country: the page's language, Accept-Language and time zone a visitor there has; locale and timezone win", async () => {
    const html = "<script>document.write(navigator.language + ' ' + Intl.DateTimeFormat().resolvedOptions().timeZone)</script>";
    const read = async (fields: Record<string, unknown>) => {
      const res = await postJson("/api/v1/content", { html, format: "text", scope: "page", render: "always", ...fields });
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { text: string }).text;
    };
    expect(await read({ country: "JP" })).toBe("ja-JP Asia/Tokyo");
    expect(await read({ country: "US" })).toBe("en-US America/New_York");
    expect(await read({ country: "JP", locale: "fr-FR", timezone: "Europe/Paris" })).toBe("fr-FR Europe/Paris");
    const bad = await postJson("/api/v1/screenshot", { url: fixture("/logs/pixel.png"), country: "Germany" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).error.message).toMatch(/country: must be a country code like "DE"/);
  });

  it('geo "auto": the locale and time zone follow the country the proxy\'s credentials name, the answer says where it was found; unknown is said', async () => {
    const { http: httpPort, socks: socksPort } = inject("proxyPorts");
    // A provider's targeting after the user ("-country-de", Bright Data's way) or the password ("_country-jp", IPRoyal's).
    const german = `http://${PROXY_USER}-country-de:${PROXY_PASSWORD}@127.0.0.1:${httpPort}`;
    const echo = await postJson("/api/v1/content", { url: fixture("/content/echo"), format: "text", proxy: german, geo: "auto" });
    expect(echo.status, await echo.clone().text()).toBe(200);
    expect(echo.headers.get("x-geo-country")).toBe("DE");
    expect(echo.headers.get("x-geo-source")).toBe("proxy-credentials");
    const read = (await echo.json()) as { text: string; geo: unknown };
    expect(read.text).toContain("accept-language=[de-DE]");
    expect(read.geo).toEqual({ country: "DE", source: "proxy-credentials" });

    const facts = async (proxy: string, fields: Record<string, unknown> = {}) => {
      const res = await shoot({ url: fixture("/controls"), proxy, geo: "auto", responseFormat: "json", ...fields });
      expect(res.status, await res.clone().text()).toBe(200);
      const envelope = (await res.json()) as { title: string; geo: unknown };
      const { lang, tz } = JSON.parse(envelope.title) as { lang: string; tz: string };
      return { seen: `${lang} ${tz}`, geo: envelope.geo, header: `${res.headers.get("x-geo-country")} ${res.headers.get("x-geo-source")}` };
    };
    const japanese = `socks5://${PROXY_USER}:${PROXY_PASSWORD}_country-jp@127.0.0.1:${socksPort}`;
    expect(await facts(japanese)).toEqual({ seen: "ja-JP Asia/Tokyo", geo: { country: "JP", source: "proxy-credentials" }, header: "JP proxy-credentials" });
    // The caller's country wins over the credentials'; locale and timezone over both.
    expect((await facts(japanese, { country: "BR" })).seen).toBe("pt-BR America/Sao_Paulo");
    expect((await facts(japanese, { locale: "fr-FR", timezone: "Europe/Paris" })).seen).toBe("fr-FR Europe/Paris");
    // Credentials that name no one country: nothing follows, and the answer says it is not known.
    const unknown = await facts(proxyUrl("http", httpPort));
    expect(unknown.geo).toEqual({ country: null, source: "none" });
    expect(unknown.header).toBe("unknown none");
    expect(unknown.seen).toBe((await facts(proxyUrl("http", httpPort), { geo: undefined })).seen);

    const alone = await shoot({ url: fixture("/controls"), geo: "auto" });
    expect(alone.status).toBe(400);
    expect(((await alone.json()) as ErrorBody).error.message).toMatch(/geo: needs proxy/);
  });

  it("content goes through the proxy in the browser; render never refuses a proxy", async () => {
    const id = runId();
    const before = (await proxied()).length;
    const res = await postJson("/api/v1/content", { url: fixture(`/logs/page?id=${id}`), format: "text", proxy: proxyUrl("http", inject("proxyPorts").http) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { rendered: boolean }).rendered).toBe(true);
    expect((await proxied()).slice(before).some((p) => p.target.includes(`/logs/page?id=${id}`))).toBe(true);
    const never = await postJson("/api/v1/content", { url: fixture("/logs/page"), render: "never", proxy: proxyUrl("http", inject("proxyPorts").http) });
    expect(never.status).toBe(400);
    expect(((await never.json()) as ErrorBody).error.message).toMatch(/proxy.*acts only in a browser/);
  });
});
