import { describe, expect, it } from "vitest";
import { crawlPageOptions, crawlRequest } from "../../../lib/api/schemas.js";
import { copyKeyOf } from "../../../lib/crawl/copies.js";

// The key of a page's copy (docs/crawl.md, "maxAge"): one account's, one way of reading the page;
// none for a crawl that sends credentials.
const way = (body: Record<string, unknown>) => {
  const request = crawlRequest.parse({ url: "https://example.com/", ...body });
  return { formats: request.formats, scope: request.scope, render: request.render, options: crawlPageOptions(request) };
};
const url = "https://example.com/a";

describe("a page's copy", () => {
  it("is keyed by the account and the way the page is read, not by the crawl's size, maxAge or webhook", () => {
    const key = copyKeyOf("acct-1", url, way({}))!;
    expect(key.pk).toMatch(/^CRAWLCOPY#acct-1#/);
    expect(copyKeyOf("acct-1", url, way({ limit: 5, depth: 1, maxAge: 60, webhookUrl: "https://hooks.example/x", source: "links" }))).toEqual(key);
    expect(copyKeyOf("acct-1", url, way({ formats: ["links", "markdown"] }))).toEqual(copyKeyOf("acct-1", url, way({ formats: ["markdown", "links"] })));
    for (const other of [
      copyKeyOf("acct-2", url, way({})),
      copyKeyOf("acct-1", `${url}?b=1`, way({})),
      copyKeyOf("acct-1", url, way({ formats: ["text"] })),
      copyKeyOf("acct-1", url, way({ scope: "page" })),
      copyKeyOf("acct-1", url, way({ render: "always" })),
      copyKeyOf("acct-1", url, way({ blockAds: true })),
    ])
      expect(other).not.toEqual(key);
  });

  it("is the same for the same options read back in another order (as from the table)", () => {
    const read = way({ blockAds: true, waitForSelector: "main" });
    const reordered = { ...read, options: Object.fromEntries(Object.entries(read.options).reverse()) as typeof read.options };
    expect(JSON.stringify(reordered.options)).not.toBe(JSON.stringify(read.options));
    expect(copyKeyOf("acct-1", url, reordered)).toEqual(copyKeyOf("acct-1", url, read));
  });

  it("is neither kept nor taken when the crawl sends credentials", () => {
    expect(copyKeyOf("acct-1", url, way({ headers: { "x-token": "secret" } }))).toBeNull();
    expect(copyKeyOf("acct-1", url, way({ cookies: [{ name: "s", value: "1" }] }))).toBeNull();
    expect(copyKeyOf("acct-1", url, way({ httpAuth: { username: "u", password: "p" } }))).toBeNull();
  });
});
