import { describe, expect, it } from "vitest";
import { crawlRequest } from "../../../lib/api/schemas.js";
import { redirectTarget } from "../../../lib/crawl/discover.js";

// A redirect a crawl does not follow (docs/crawl.md, "Safe"): one to another origin of its scope
// leads to a page of its own, which that origin's robots.txt and its host's turn then govern.

describe("a page that redirects to another origin of its crawl's scope", () => {
  const crawl = (body: Record<string, unknown>) => ({ id: "crl_x", request: crawlRequest.parse({ url: "http://example.com/", ...body }) });
  const page = { url: "http://example.com/docs", depth: 2, foundBy: "link" as const, barren: 0 };
  it("leads to a page of its own, at its depth, read later under that origin's robots.txt and in its host's turn", () => {
    expect(redirectTarget(crawl({}), page, "https://example.com/docs")).toMatchObject({ url: "https://example.com/docs", depth: 2, foundBy: "link" });
    expect(redirectTarget(crawl({ subdomains: true }), page, "http://docs.example.com/a")).toMatchObject({ url: "http://docs.example.com/a", depth: 2 });
    // The start's target is not a start again (its sitemaps were read).
    expect(redirectTarget(crawl({}), { ...page, url: "http://example.com/", depth: 0, foundBy: "start" }, "https://example.com/")).toMatchObject({
      depth: 0,
      foundBy: "link",
    });
  });
  it("is followed on its own origin, and leads nowhere out of scope or in a trap's shape", () => {
    expect(redirectTarget(crawl({}), page, "/docs/")).toBeNull();
    expect(redirectTarget(crawl({}), page, "http://docs.example.com/a")).toBeNull();
    expect(redirectTarget(crawl({}), page, "https://other.example/")).toBeNull();
    expect(redirectTarget(crawl({ exclude: ["https://**"] }), page, "https://example.com/docs")).toBeNull();
    expect(redirectTarget(crawl({}), page, `https://example.com/${"a/".repeat(40)}`)).toBeNull();
    expect(redirectTarget(crawl({}), page, "mailto:x@example.com")).toBeNull();
  });
});
