// POST /api/v1/metadata against fixture pages on 127.0.0.1, through the local stack, without a key.
import puppeteer from "puppeteer-core";
import { describe, expect, inject, it } from "vitest";
import { quietChromium } from "../../dev/harness/browser.js";
import { signUp } from "../../dev/harness/dev-process.js";
import { TEST_PAGE_LOAD_MS } from "../global-setup.js";
import { canaryHits, type ErrorBody, postJson } from "../helpers/api.js";

const origin = () => inject("fixtureUrl");
const fixture = (path: string) => `${origin()}${path}`;
const metadata = (url: string, headers: Record<string, string> = {}) => postJson("/api/v1/metadata", { url }, headers);

async function metadataOf(path: string) {
  const res = await metadata(fixture(path));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function errorOf(url: string) {
  const res = await metadata(url);
  return { status: res.status, ...((await res.json()) as ErrorBody).error };
}

// The fields beyond the interface document's, when a page says none of them.
const NOTHING_MORE = {
  lang: null,
  canonical: null,
  siteName: null,
  type: null,
  author: null,
  publishedTime: null,
  modifiedTime: null,
  twitterCard: null,
  twitterSite: null,
  ogImageWidth: null,
  ogImageHeight: null,
  ogImageAlt: null,
  logo: null,
  feeds: [],
};
const NOTHING = { description: "", ogImage: null, ogTitle: null, ogDescription: null, themeColor: null, ...NOTHING_MORE };

describe("metadata", () => {
  it("answers every field of a complete page, without a key: entities decoded, whitespace collapsed, URLs absolute", async () => {
    const res = await metadata(fixture("/meta/full"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      title: "Full page & more",
      description: "The description.",
      ogImage: fixture("/images/og.png"),
      ogTitle: "OG title",
      ogDescription: "OG description",
      // An apple-touch-icon (180 px by convention) beats a 32 px icon.
      favicon: fixture("/apple.png"),
      themeColor: "#0ea5e9",
      ...NOTHING_MORE,
      // No JSON-LD logo: the best icon.
      logo: fixture("/apple.png"),
    });
  });

  it("answers the richer fields from their first sources", async () => {
    expect(await metadataOf("/meta/rich")).toEqual({
      title: "Rich",
      description: "",
      ogImage: fixture("/images/hero.jpg"),
      ogTitle: null,
      ogDescription: null,
      favicon: fixture("/favicon-32.png"),
      themeColor: null,
      lang: "en-GB",
      canonical: fixture("/articles/rich"),
      siteName: "The Fixture Times",
      type: "article",
      author: "Ada Lovelace",
      publishedTime: "2026-11-20T07:30:00.000Z",
      modifiedTime: "2026-11-21T00:00:00.000Z",
      twitterCard: "summary_large_image",
      twitterSite: "@fixture",
      // The first og:image's own properties, not the second's.
      ogImageWidth: 1200,
      ogImageHeight: 630,
      ogImageAlt: "A hero image",
      logo: fixture("/images/logo.png"),
      // Absolute, without duplicates, RSS/Atom/JSON only (not an hreflang alternate).
      feeds: [fixture("/feed.xml"), "https://feeds.example.test/atom", fixture("/meta/feed.json")],
    });
  });

  it("answers the richer fields from their fallbacks: og:locale, og:url, og:updated_time, JSON-LD, the Twitter image's alt", async () => {
    expect(await metadataOf("/meta/rich-fallbacks")).toMatchObject({
      ogImage: fixture("/card.png"),
      lang: "pt-BR",
      canonical: "https://www.example.test/post",
      siteName: "Example Site",
      type: null,
      // article:author is a profile URL, not a name: JSON-LD's authors (one by reference) instead.
      author: "Ada Lovelace, Grace Hopper",
      publishedTime: "2026-11-19T07:00:00.000Z",
      modifiedTime: "2026-11-22T10:00:00.000Z",
      ogImageWidth: null,
      ogImageAlt: "The card",
      logo: "https://www.example.test/logo.png",
      feeds: [],
    });
  });

  it.each([
    ["/meta/noscript-pixel", { title: "After the pixel", description: "Still in the head.", ogImage: "/meta/assets/og.png", themeColor: "#ff6600" }],
    ["/meta/tag-manager", { title: "After the pixel", description: "Still in the head.", ogImage: "/meta/assets/og.png", themeColor: "#ff6600" }],
    ["/meta/stray-before-head", { title: "After the pixel", description: "Still in the head.", ogImage: "/meta/assets/og.png", themeColor: "#ff6600" }],
    ["/meta/svg-title", { title: "Late title", description: "", ogImage: null, themeColor: null }],
    ["/meta/comments", { title: "Comments", description: "Real description", ogImage: "/real.png", themeColor: "#123456" }],
  ])("reads %s as a browser does", async (path, expected) => {
    const want = { ...expected, ogImage: expected.ogImage && fixture(expected.ogImage) };
    expect(await metadataOf(path)).toMatchObject(want);
    expect(await browserReads(path)).toEqual(want);
  });

  it.each([
    ["/meta/og-only", { title: "Only OG", description: "OG says", ogTitle: "Only OG", ogDescription: "OG says" }],
    ["/meta/twitter-only", { title: "Twitter title", description: "Twitter says", ogImage: "/meta/card.png" }],
    ["/meta/h1-only", { title: "The heading" }],
    ["/meta/nothing", { title: "" }],
  ])("falls back in docs/api.md's order: %s", async (path, expected) => {
    const got = await metadataOf(path);
    const want: Record<string, unknown> = { ...NOTHING, favicon: fixture("/favicon.ico"), ...expected };
    if (typeof want.ogImage === "string") want.ogImage = fixture(want.ogImage);
    expect(got).toEqual(want);
  });

  it("takes the first <title> even when empty, skips empty duplicate tags, prefers an unconditional theme-color", async () => {
    expect(await metadataOf("/meta/duplicates")).toMatchObject({
      title: "Real OG title",
      description: "Second description wins",
      ogTitle: "Real OG title",
      themeColor: "#ffffff",
    });
  });

  it("resolves relative and protocol-relative URLs against the final URL after a redirect, and reads the manifest's theme colour", async () => {
    const got = await metadataOf(`/redirect?to=${encodeURIComponent("/meta/sub/relative")}`);
    expect(got).toMatchObject({
      title: "Relative",
      ogImage: "http://cdn.example.test/og.png",
      favicon: fixture("/meta/icons/icon.png"),
      themeColor: "#7c3aed",
    });
  });

  it("resolves against <base href>; the default favicon stays at the origin", async () => {
    expect(await metadataOf("/meta/base")).toMatchObject({ ogImage: fixture("/static/v2/img/og.png"), favicon: fixture("/static/v2/icon.svg") });
  });

  it("prefers og:image:secure_url, and the largest declared icon over an apple-touch-icon (mask-icon is not a favicon)", async () => {
    expect((await metadataOf("/meta/secure-url")).ogImage).toBe("https://img.example.test/a.png");
    expect((await metadataOf("/meta/icons-sized")).favicon).toBe(fixture("/icon-192.png"));
  });

  it("decodes the declared charset: Shift_JIS from <meta>, ISO-8859-1 from the header, and gzip bodies", async () => {
    expect(await metadataOf("/meta/shift-jis")).toMatchObject({ title: "日本語のタイトル", description: "説明文です" });
    expect(await metadataOf("/meta/latin1")).toMatchObject({ title: "Café crème", description: "Naïve <résumé> — ok" });
    expect((await metadataOf("/meta/gzip")).title).toBe("Compressed");
  });

  it("stops reading a huge page once the head is read, and reads at most 2 MB of one without a title", async () => {
    const eventsBefore = await events();
    expect((await metadataOf("/meta/huge?mb=100")).title).toBe("Huge page");
    expect((await metadataOf("/meta/huge?mb=100&title=0")).title).toBe("");
    // The server counts what it could write before we hung up (socket buffers take a few MB).
    const sent = await waitFor(async () => {
      const added = (await events()).slice(eventsBefore.length).filter((e) => e.startsWith("huge-bytes="));
      return added.length === 2 ? added.map((e) => Number(e.split("=")[1])) : null;
    });
    for (const bytes of sent) expect(bytes).toBeLessThan(20 * 1024 * 1024);
  });

  it("loads a script-rendered page in the browser when its static HTML says nothing", async () => {
    expect(await metadataOf("/meta/script-rendered")).toEqual({
      ...NOTHING,
      title: "Rendered by script",
      description: "Drawn in the browser",
      ogImage: fixture("/rendered.png"),
      favicon: fixture("/spa.png"),
      logo: fixture("/spa.png"),
    });
  });

  it("answers a hostile head quickly and within bounds", async () => {
    const started = Date.now();
    const got = await metadataOf("/meta/hostile-head");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(got).toMatchObject({ title: "Hostile", description: "", lang: null, logo: null, publishedTime: null, ogImageWidth: null, ogImageHeight: null });
    expect(got.author).toBe(`${"A".repeat(2_000)}…`);
    expect(got.feeds).toEqual(Array.from({ length: 10 }, (_, i) => fixture(`/feed-${i}.xml`)));
  });

  it("answers what can be known of a non-HTML resource", async () => {
    expect(await metadataOf("/img/red.png")).toEqual({ ...NOTHING, title: "red.png", favicon: fixture("/favicon.ico") });
  });

  it("answers 422 INVALID_URL for an HTTP error, a closed port, a private address and a redirect to one, without touching it", async () => {
    expect(await errorOf(fixture("/not-found"))).toMatchObject({ status: 422, code: "INVALID_URL", message: expect.stringContaining("HTTP 404") });
    expect(await errorOf(`http://127.0.0.1:${inject("closedPort")}/`)).toMatchObject({
      status: 422,
      code: "INVALID_URL",
      message: expect.stringContaining("refused the connection"),
    });
    expect(await errorOf(`http://10.0.0.1/`)).toMatchObject({ status: 422, code: "INVALID_URL", message: expect.stringContaining("private") });
    const before = (await canaryHits()).length;
    const redirected = await errorOf(fixture(`/redirect?to=${encodeURIComponent(`${inject("canaryUrl")}/metadata`)}`));
    expect(redirected).toMatchObject({ status: 422, code: "INVALID_URL", message: expect.stringContaining("private") });
    expect((await canaryHits()).length).toBe(before);
  });

  it("answers 504 RENDER_TIMEOUT when the page does not answer within the page-load limit", async () => {
    const started = Date.now();
    expect(await errorOf(fixture("/hang"))).toMatchObject({ status: 504, code: "RENDER_TIMEOUT" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TEST_PAGE_LOAD_MS - 100);
  });

  it("is free with a key and refuses a wrong key", async () => {
    // An account of its own: other files charge the shared one concurrently.
    const { api_key } = await signUp(inject("baseUrl"), `metadata-${Date.now()}@shotline.test`);
    const key = { authorization: `Bearer ${api_key}` };
    const usage = async () => (await (await fetch(`${inject("baseUrl")}/api/v1/usage`, { headers: key })).json()) as { balance_micro_usd: number };
    const before = (await usage()).balance_micro_usd;
    expect((await metadata(fixture("/meta/full"), key)).status).toBe(200);
    expect((await usage()).balance_micro_usd).toBe(before);
    expect((await metadata(fixture("/meta/full"), { authorization: "Bearer shl_live_wrong" })).status).toBe(401);
  });
});

/** What Chromium's DOM says of a page (with scripting on, as any browser): the same fields, by the DOM's own rules. */
async function browserReads(path: string) {
  const browser = await puppeteer.launch({ ...(await quietChromium()), pipe: true });
  try {
    const page = await browser.newPage();
    await page.goto(fixture(path), { waitUntil: "load" });
    return await page.evaluate(() => {
      const content = (selector: string) => document.querySelector<HTMLMetaElement>(selector)?.content ?? null;
      const image = content('meta[property="og:image"]');
      return {
        title: document.title,
        description: content('meta[name="description"]') ?? "",
        ogImage: image && new URL(image, document.baseURI).href,
        themeColor: content('meta[name="theme-color"]'),
      };
    });
  } finally {
    await browser.close();
  }
}

async function events(): Promise<string[]> {
  return (await fetch(fixture("/__events"))).json() as Promise<string[]>;
}

async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
