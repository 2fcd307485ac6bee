import { describe, expect, it } from "vitest";
import { crawlPageOptions, crawlRequest } from "../../../../lib/api/schemas.js";
import { credentialsOnlyFor, matchesPattern } from "../../../../lib/render/guard/requests.js";

describe("blockRequests patterns", () => {
  it("match the whole URL, case-insensitively, with * for any run of characters and everything else literal", () => {
    expect(matchesPattern("*://*.doubleclick.net/*", "https://securepubads.g.doubleclick.net/tag/js/gpt.js")).toBe(true);
    expect(matchesPattern("*/analytics.js", "https://example.com/static/Analytics.JS")).toBe(true);
    expect(matchesPattern("*/analytics.js", "https://example.com/analytics.js?v=2")).toBe(false);
    expect(matchesPattern("https://example.com/a.b", "https://example.com/aXb")).toBe(false);
    expect(matchesPattern("*", "http://127.0.0.1/")).toBe(true);
    expect(matchesPattern("*what=blocked-*", "http://127.0.0.1:1/echo?id=1&what=blocked-by-pattern")).toBe(true);
    expect(matchesPattern("**a**", "xyz")).toBe(false);
  });

  it("stay fast on the worst a page and a customer can send together (as a regular expression, *a*a*a*b took 27 s on a 500-character URL)", () => {
    const url = `http://127.0.0.1/${"a".repeat(8_000)}`;
    const started = performance.now();
    for (const pattern of ["*a*a*a*b", "*a*a*a*a*a*a*b", `${"*a".repeat(1_000)}*b`.slice(0, 2_048)]) {
      for (let i = 0; i < 50; i++) expect(matchesPattern(pattern, url)).toBe(false);
    }
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("a crawl's credentials", () => {
  const options = crawlPageOptions(
    crawlRequest.parse({
      url: "https://example.com/",
      subdomains: true,
      headers: { "x-token": "secret" },
      cookies: [{ name: "session", value: "s3cret" }],
      httpAuth: { username: "u", password: "p" },
      blockAds: true,
    }),
  );
  it("go to the start's origin alone: a browser opening a subdomain's page, or the start's host over another scheme or port, has none", () => {
    expect(credentialsOnlyFor(options, "https://example.com/docs/a", "https://example.com/")).toBe(options);
    for (const page of ["https://docs.example.com/a", "http://example.com/a", "https://example.com:8443/a"]) {
      const stripped = credentialsOnlyFor(options, page, "https://example.com/");
      expect(stripped).toMatchObject({ headers: {}, cookies: [], blockAds: true });
      expect(stripped.httpAuth).toBeUndefined();
      expect(JSON.stringify(stripped)).not.toMatch(/secret|s3cret|"p"/);
    }
  });
});
