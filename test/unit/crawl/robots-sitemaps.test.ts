import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// robots.txt and sitemaps as the crawler reads them, from a loopback site it is allowed to reach
// (ALLOWED_PRIVATE_HOSTS, set before the modules load), through the real network guard, with the
// real parsers (robots-parser, sitemap's sax streams). A hostile file is served here too.

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: Server;
let origin: string;
/** Bytes the site has written, by path. */
const sent = new Map<string, number>();

const send =
  (status: number, body: string | Buffer, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };

let crawl: {
  fetchRobots: typeof import("../../../lib/crawl/robots.js").fetchRobots;
  robotsOf: typeof import("../../../lib/crawl/robots.js").robotsOf;
  readSitemap: typeof import("../../../lib/crawl/sitemaps.js").readSitemap;
  crawlerAgent: typeof import("../../../lib/crawl/fetch.js").crawlerAgent;
};

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = new URL(request.url!, "http://x").pathname;
    const write = response.write.bind(response);
    response.write = ((chunk: Buffer, ...rest: never[]) => {
      sent.set(path, (sent.get(path) ?? 0) + chunk.length);
      return write(chunk, ...rest);
    }) as typeof response.write;
    (routes.get(path) ?? send(404, "not here"))(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.ALLOWED_PRIVATE_HOSTS = new URL(origin).host;
  process.env.CRAWLER_INFO_URL = "https://shotline.test/docs#crawl";
  crawl = {
    ...(await import("../../../lib/crawl/robots.js")),
    ...(await import("../../../lib/crawl/sitemaps.js")),
    ...(await import("../../../lib/crawl/fetch.js")),
  };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const signal = () => AbortSignal.timeout(20_000);
const urlset = (locs: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<url><loc>${loc}</loc><lastmod>2026-11-01</lastmod></url>`).join("")}</urlset>`;

describe("robots.txt", () => {
  it("is obeyed for the product token Shotline, its own group over *'s, with its Crawl-delay capped and its Sitemap lines", async () => {
    let agent = "";
    routes.set("/robots.txt", (request, response) => {
      agent = String(request.headers["user-agent"]);
      send(
        200,
        "User-agent: *\nDisallow: /\n\nUser-agent: shotline\nDisallow: /private/\nAllow: /private/open\nCrawl-delay: 60\n\nSitemap: https://example.com/sitemap-a.xml\nSitemap: https://example.com/sitemap-b.xml.gz\n",
      )(request, response);
    });
    const robots = crawl.robotsOf(origin, await crawl.fetchRobots(origin, signal()));
    expect(agent).toBe("Mozilla/5.0 (compatible; Shotline/1.0; +https://shotline.test/docs#crawl)");
    expect(robots.allows(`${origin}/docs/a`)).toBe(true);
    expect(robots.allows(`${origin}/private/secret`)).toBe(false);
    expect(robots.allows(`${origin}/private/open`)).toBe(true);
    expect(robots.crawlDelay).toBe(10);
    expect(robots.sitemaps).toEqual(["https://example.com/sitemap-a.xml", "https://example.com/sitemap-b.xml.gz"]);
    expect(robots.closed).toBeNull();
  });

  it("that answers 4xx means no rules; 5xx, 429 or no answer closes the whole host (RFC 9309, 2.3.1)", async () => {
    for (const [status, open] of [
      [404, true],
      [403, true],
      [410, true],
      [429, false],
      [500, false],
      [503, false],
    ] as const) {
      routes.set("/robots.txt", send(status, "User-agent: *\nDisallow: /\n"));
      const robots = crawl.robotsOf(origin, await crawl.fetchRobots(origin, signal()));
      expect([status, robots.allows(`${origin}/a`)]).toEqual([status, open]);
      if (!open) expect(robots.closed).toMatch(new RegExp(`HTTP ${status}`));
    }
    // A redirect to a private address is refused before any connection: the host is closed.
    routes.set("/robots.txt", send(301, "", { location: "http://169.254.169.254/latest/meta-data/" }));
    const refused = await crawl.fetchRobots(origin, signal());
    expect(refused).toMatchObject({ state: "unreachable" });
    expect(crawl.robotsOf(origin, refused).allows(`${origin}/a`)).toBe(false);
    // A redirect loop past five hops: unavailable, as a 4xx is (no rules).
    routes.set("/robots.txt", send(302, "", { location: "/robots.txt" }));
    expect(await crawl.fetchRobots(origin, signal())).toEqual({ state: "none", status: 310 });
  });

  it("is read to 500 KiB: a rule past it does not apply, however long the file", async () => {
    const filler = `# ${"x".repeat(100)}\n`.repeat(Math.ceil((600 * 1024) / 103));
    routes.set("/robots.txt", send(200, `User-agent: *\nDisallow: /early/\n${filler}Disallow: /late/\n`));
    const robots = crawl.robotsOf(origin, await crawl.fetchRobots(origin, signal()));
    expect(robots.allows(`${origin}/early/a`)).toBe(false);
    expect(robots.allows(`${origin}/late/a`)).toBe(true);
  });
  it("whose wildcard rules would cost seconds a URL closes the host, cheaply; a few wildcards are judged", async () => {
    routes.set("/robots.txt", send(200, `User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp/*/cache\n`));
    const few = crawl.robotsOf(origin, await crawl.fetchRobots(origin, signal()));
    expect([few.allows(`${origin}/a.pdf`), few.allows(`${origin}/a.html`), few.allows(`${origin}/tmp/x/cache`)]).toEqual([false, true, false]);
    // 500 KiB of `Disallow: /*a*a*a...`: matching one long URL against it would take a billion steps.
    routes.set("/robots.txt", send(200, `User-agent: *\n${`Disallow: /${"*a".repeat(200)}\n`.repeat(1200)}`));
    const started = performance.now();
    const many = crawl.robotsOf(origin, await crawl.fetchRobots(origin, signal()));
    expect(many.closed).toMatch(/wildcard rules, too many to judge/);
    expect(many.allows(`${origin}/${"a".repeat(2000)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("a sitemap", () => {
  it("is read as a urlset or an index, plain, gzipped by Content-Encoding or as a .xml.gz file", async () => {
    const pages = ["https://example.com/a", "https://example.com/b?x=1&amp;y=2"];
    routes.set("/plain.xml", send(200, urlset(pages), { "content-type": "application/xml" }));
    routes.set("/encoded.xml", send(200, zlib.gzipSync(urlset(pages)), { "content-type": "application/xml", "content-encoding": "gzip" }));
    routes.set("/file.xml.gz", send(200, zlib.gzipSync(urlset(pages)), { "content-type": "application/gzip" }));
    for (const path of ["/plain.xml", "/encoded.xml", "/file.xml.gz"]) {
      const read = await crawl.readSitemap(`${origin}${path}`, signal());
      expect(read).toEqual({
        kind: "urlset",
        entries: [
          { loc: "https://example.com/a", lastmod: "2026-11-01" },
          { loc: "https://example.com/b?x=1&y=2", lastmod: "2026-11-01" },
        ],
      });
    }
    routes.set(
      "/index.xml",
      send(
        200,
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/plain.xml</loc></sitemap><sitemap><loc>${origin}/file.xml.gz</loc><lastmod>2026-10-01</lastmod></sitemap></sitemapindex>`,
      ),
    );
    const index = await crawl.readSitemap(`${origin}/index.xml`, signal());
    expect(index.kind).toBe("index");
    expect(index.entries.map((e) => e.loc)).toEqual([`${origin}/plain.xml`, `${origin}/file.xml.gz`]);
    await expect(crawl.readSitemap(`${origin}/missing.xml`, signal())).rejects.toMatchObject({ code: "INVALID_URL" });
  });

  it("stops at 50,000 entries and at what the caller takes", async () => {
    const many = Array.from({ length: 50_010 }, (_, i) => `https://example.com/p/${i}`);
    routes.set("/many.xml", send(200, urlset(many)));
    const read = await crawl.readSitemap(`${origin}/many.xml`, signal());
    expect(read.entries.length).toBe(50_000);
    expect(read.entries.at(-1)?.loc).toBe("https://example.com/p/49999");
    expect(read.stopped).toMatch(/more than 50000 entries/);
    const few = await crawl.readSitemap(`${origin}/many.xml`, signal(), 10);
    expect(few.entries.map((e) => e.loc)).toEqual(many.slice(0, 10));
  });

  it("that is a gzip bomb stops at 50 MB of output, having read a sliver of it", async () => {
    // 128 GB of spaces inside a urlset, in 128 MB: gzip members one after another (a gzip reader
    // reads them as one file), each a megabyte of spaces in a kilobyte.
    const megabyte = zlib.gzipSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9 });
    const bomb = Buffer.concat([
      zlib.gzipSync(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/first</loc></url>`),
      ...Array.from({ length: 128 * 1024 }, () => megabyte),
      zlib.gzipSync("</urlset>"),
    ]);
    routes.set("/bomb.xml.gz", (_request, response) => {
      response.writeHead(200, { "content-type": "application/gzip" });
      // In pieces, as the reader takes them: what it never asked for is never written.
      let at = 0;
      const next = () => {
        while (at < bomb.length) {
          const piece = bomb.subarray(at, at + 16 * 1024);
          at += piece.length;
          if (!response.write(piece)) return response.once("drain", next);
        }
        response.end();
      };
      response.on("close", () => (at = bomb.length));
      next();
    });
    const started = Date.now();
    const read = await crawl.readSitemap(`${origin}/bomb.xml.gz`, signal());
    expect(read.entries.map((e) => e.loc)).toEqual(["https://example.com/first"]);
    expect(read.stopped).toBe("larger than 50 MB uncompressed");
    // 50 MB of output is about 50 KB of this input. What was written besides waits in the sockets'
    // buffers (36 MB at most here: tcp_wmem's and tcp_rmem's largest): half the bomb is more than that.
    expect(sent.get("/bomb.xml.gz")).toBeLessThan(bomb.length / 2);
    // Inflating and parsing 128 GB would take many minutes.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("that is a billion-laughs file is refused cheaply: its entities are never expanded", async () => {
    const laughs = [`<!ENTITY lol "lol">`, ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`)].join("");
    routes.set(
      "/laughs.xml",
      send(
        200,
        `<?xml version="1.0"?><!DOCTYPE urlset [${laughs}]><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/&lol9;</loc></url><url><loc>https://example.com/fine</loc></url></urlset>`,
      ),
    );
    const started = Date.now();
    const read = await crawl.readSitemap(`${origin}/laughs.xml`, signal());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(JSON.stringify(read).length).toBeLessThan(10_000);
    // The parser stops at the first entity it was never told (sax, strict entities): nothing after it is read.
    expect(read.entries).toEqual([]);
    expect(read.stopped).toMatch(/^it is not well-formed XML \(.*entity/i);
  });

  it("that is not a sitemap, or is malformed, gives what it read", async () => {
    routes.set("/page.html", send(200, `<html>${"<p>text</p>".repeat(10_000)}</html>`));
    expect(await crawl.readSitemap(`${origin}/page.html`, signal())).toEqual({
      kind: "unknown",
      entries: [],
      stopped: "it has no urlset or sitemapindex element",
    });
    routes.set(
      "/broken.xml",
      send(200, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/ok</loc></url><url><loc>https://exa`),
    );
    expect((await crawl.readSitemap(`${origin}/broken.xml`, signal())).entries.map((e) => e.loc)).toEqual(["https://example.com/ok"]);
  });
});
