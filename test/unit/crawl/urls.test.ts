import { describe, expect, it } from "vitest";
import { globMatcher, MAX_URL_LENGTH, normalizeUrl, patternOf, scopeTest, trapOf } from "../../../lib/crawl/urls.js";

describe("a crawl's URLs", () => {
  it("are normalised: one frontier row per page however it is linked", () => {
    const forms = [
      "HTTPS://Example.COM:443/docs/a?b=2&a=1#intro",
      "https://example.com/docs/./x/../a?a=1&utm_source=news&b=2&fbclid=XYZ",
      "https://user:pw@example.com/docs/a;jsessionid=ABC123?gclid=1&a=1&b=2&PHPSESSID=9",
      "/docs/a?sid=4f2a&a=1&b=2",
    ];
    for (const form of forms) expect(normalizeUrl(form, "https://example.com/")).toBe("https://example.com/docs/a?a=1&b=2");
    // A name that repeats keeps its values in their order (a=2&a=1 is not a=1&a=2).
    expect(normalizeUrl("http://example.com:80/?a=2&z=0&a=1")).toBe("http://example.com/?a=2&a=1&z=0");
    expect(normalizeUrl("https://example.com/%7Euser/%2fx%c3%a9")).toBe("https://example.com/~user/%2Fx%C3%A9");
    // The query as written: a bare name stays bare, escapes and + stay as they were.
    expect(normalizeUrl("https://example.com/s?q=a+b%20c&flag&utm%5Fsource=x")).toBe("https://example.com/s?flag&q=a+b%20c");
    for (const bad of ["mailto:a@example.com", "javascript:alert(1)", "ftp://example.com/", "http://", "data:text/html,x"])
      expect(normalizeUrl(bad)).toBeNull();
  });

  it("have a shape: counted pages share it, different pages do not", () => {
    expect(patternOf("https://example.com/calendar?month=2026-11")).toBe(patternOf("https://example.com/calendar?month=2031-04"));
    expect(patternOf("https://example.com/page/2")).toBe("example.com/page/N");
    expect(patternOf("https://example.com/list?page=3&page=4&sort=a")).toBe("example.com/list?page&sort");
    expect(patternOf("https://example.com/about")).not.toBe(patternOf("https://example.com/team"));
  });

  it("that only a trap makes are refused: too long, too deep, a segment run repeated", () => {
    expect(trapOf(`https://example.com/${"a".repeat(MAX_URL_LENGTH)}`)).toMatch(/longer than 2048/);
    expect(trapOf(`https://example.com/${Array.from({ length: 33 }, (_, i) => `s${i}`).join("/")}`)).toMatch(/more than 32/);
    expect(trapOf("https://example.com/a/a/a")).toMatch(/repeated/);
    expect(trapOf("https://example.com/docs/x/y/x/y/x/y/page")).toMatch(/repeated/);
    expect(trapOf("https://example.com/a/b/c/d/e/a/b/c/d/e/a/b/c/d/e")).toBeNull(); // a run of 5: not judged
    for (const fine of ["https://example.com/", "https://example.com/blog/2026/11/28/a-post", "https://example.com/a/a/b/b"]) expect(trapOf(fine)).toBeNull();
  });

  it("match globs on the whole URL: * within a segment, ** across", () => {
    const docs = globMatcher("https://example.com/docs/*");
    expect(docs("https://example.com/docs/intro")).toBe(true);
    expect(docs("https://example.com/docs/guide/intro")).toBe(false);
    const deep = globMatcher("https://example.com/docs/**");
    expect(deep("https://example.com/docs/guide/intro")).toBe(true);
    expect(deep("https://example.com/blog/x")).toBe(false);
    // Regular expression characters are themselves: ? and . match only themselves.
    const query = globMatcher("https://example.com/a?b=1");
    expect(query("https://example.com/a?b=1")).toBe(true);
    expect(query("https://example.com/ab=1")).toBe(false);
    expect(globMatcher("**.pdf")("https://example.com/x/y.pdf")).toBe(true);
    expect(globMatcher("**.pdf")("https://example.com/x/yxpdf")).toBe(false);
  });

  it("keep to the start's site, its subdomains when asked, includes and excludes (exclude wins)", () => {
    const site = scopeTest({ start: "https://www.example.com/", subdomains: false, include: [], exclude: [] });
    expect(site("https://example.com/a")).toBe(true);
    expect(site("https://www.example.com/a")).toBe(true);
    expect(site("https://docs.example.com/a")).toBe(false);
    expect(site("https://example.com.evil.test/a")).toBe(false);
    expect(site("https://notexample.com/a")).toBe(false);
    expect(site("https://example.com:8443/a")).toBe(false);
    expect(site("http://example.com/a")).toBe(true);
    const subs = scopeTest({ start: "https://example.com/", subdomains: true, include: ["**/docs/**"], exclude: ["**/docs/private/**"] });
    expect(subs("https://docs.example.com/docs/a")).toBe(true);
    expect(subs("https://a.b.example.com/docs/a")).toBe(true);
    expect(subs("https://example.com/blog/a")).toBe(false);
    expect(subs("https://example.com/docs/private/a")).toBe(false);
    expect(subs("https://badexample.com/docs/a")).toBe(false);
  });
});
