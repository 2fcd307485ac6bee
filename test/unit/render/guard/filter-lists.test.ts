import { describe, expect, it } from "vitest";
import { blockedByLists, loadFilterLists, MATCHED_URL_CHARS } from "../../../../lib/render/guard/filter-lists.js";
import { toFilter } from "../../../../lib/render/packaging/filter-build.js";

describe("declarativeNetRequest rules as filters", () => {
  it("keeps what blocks or allows, with its types, initiator domains and party", () => {
    expect(toFilter({ action: { type: "block" }, condition: { urlFilter: "||ads.example^" } })).toBe("||ads.example^");
    expect(
      toFilter({
        action: { type: "block" },
        condition: {
          urlFilter: "/banner.",
          resourceTypes: ["script", "sub_frame", "xmlhttprequest"],
          initiatorDomains: ["a.com"],
          excludedInitiatorDomains: ["b.com"],
          domainType: "thirdParty",
        },
      }),
    ).toBe("/banner.$script,subdocument,xmlhttprequest,domain=a.com|~b.com,third-party");
    expect(toFilter({ action: { type: "allow" }, condition: { urlFilter: "/ads.js", domainType: "firstParty", excludedResourceTypes: ["image"] } })).toBe(
      "@@/ads.js$~image,~third-party",
    );
    expect(toFilter({ action: { type: "allowAllRequests" }, condition: { urlFilter: "||site.example^", resourceTypes: ["main_frame"] } })).toBe(
      "@@||site.example^$document",
    );
    expect(toFilter({ action: { type: "block" }, condition: { regexFilter: "^https?://x\\.example/ad[0-9]+" } })).toBe("/^https?://x\\.example/ad[0-9]+/");
  });

  it("drops what does not block (redirects, header edits) and conditions filter syntax cannot say", () => {
    expect(toFilter({ action: { type: "redirect" }, condition: { urlFilter: "||x.example^" } })).toBeNull();
    expect(toFilter({ action: { type: "modifyHeaders" }, condition: { urlFilter: "||x.example^" } })).toBeNull();
    expect(toFilter({ action: { type: "block" }, condition: { urlFilter: "||x.example^", requestMethods: ["post"] } })).toBeNull();
    expect(toFilter({ action: { type: "block" }, condition: { requestDomains: ["x.example"] } })).toBeNull();
  });
});

describe("the shipped lists", () => {
  const page = "https://news.example/article";
  it("block well-known ad and tracker requests, each list its own, and let the rest through", { timeout: 120_000 }, async () => {
    await loadFilterLists(["ads", "trackers"]);
    expect(blockedByLists(["ads"], "https://securepubads.g.doubleclick.net/tag/js/gpt.js", "script", page)).toBe(true);
    expect(blockedByLists(["ads"], "https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js", "script", page)).toBe(true);
    expect(blockedByLists(["trackers"], "https://www.google-analytics.com/analytics.js", "script", page)).toBe(true);
    expect(blockedByLists(["ads"], "https://www.google-analytics.com/analytics.js", "script", page)).toBe(false);
    expect(blockedByLists(["ads", "trackers"], "https://cdn.jsdelivr.net/npm/jquery@3/dist/jquery.min.js", "script", page)).toBe(false);
    expect(blockedByLists(["ads", "trackers"], "https://news.example/static/app.js", "script", page)).toBe(false);
    expect(blockedByLists([], "https://securepubads.g.doubleclick.net/tag/js/gpt.js", "script", page)).toBe(false);
    // An exception of the list: adsbygoogle is allowed on the sites that break without it.
    expect(blockedByLists(["ads"], "https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js", "script", "https://mshares.co/")).toBe(false);
  });

  it("match a URL on its first characters, so a page's megabyte URL cannot stall the process (in full: minutes)", { timeout: 120_000 }, async () => {
    await loadFilterLists(["ads", "trackers"]);
    const started = performance.now();
    // What met the lists' slowest regular expressions (30 KB of each: 0.1 to 0.5 s in full).
    for (const [unit, from] of [
      [".com/b/s/", page],
      ["/ad/", "https://txxx.com/"],
      ["metrics.x/", "https://txxx.com/"],
    ] as const) {
      blockedByLists(["ads", "trackers"], `https://news.example/${unit.repeat(Math.ceil(1_000_000 / unit.length))}`, "image", from);
    }
    // Cut, this is milliseconds; uncut, the 1 MB URLs would take minutes: 2 s leaves a busy machine room.
    expect(performance.now() - started).toBeLessThan(2_000);
    const late = `https://news.example/${"x".repeat(MATCHED_URL_CHARS)}/ad-provider.js`;
    expect(blockedByLists(["ads"], `https://news.example/ad-provider.js?${"x".repeat(MATCHED_URL_CHARS)}`, "script", page)).toBe(true);
    expect(blockedByLists(["ads"], late, "script", page), "past the matched characters").toBe(false);
  });
});
