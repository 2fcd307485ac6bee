import { describe, expect, it } from "vitest";
import { readLinkedData } from "../../../lib/metadata/json-ld.js";
import { isoDate, languageTag, pixels } from "../../../lib/metadata/values.js";

const script = (value: unknown) => JSON.stringify(value);
const NONE = { datePublished: null, dateModified: null, author: null, logo: null, siteName: null };

describe("readLinkedData", () => {
  it("reads a single object: dates, author, publisher's logo and name", () => {
    const article = {
      "@context": "https://schema.org",
      "@type": "NewsArticle",
      datePublished: "2026-01-02T03:04:05Z",
      dateModified: "2026-01-03",
      author: { "@type": "Person", name: " Ada Lovelace " },
      publisher: { "@type": "Organization", name: "Daily", logo: { "@type": "ImageObject", url: "/logo.png" } },
    };
    expect(readLinkedData([script(article)])).toEqual({
      datePublished: "2026-01-02T03:04:05Z",
      dateModified: "2026-01-03",
      author: "Ada Lovelace",
      logo: "/logo.png",
      siteName: "Daily",
    });
  });

  it("reads an @graph, following @id references, and prefers an Organization's logo and a WebSite's name", () => {
    const graph = {
      "@graph": [
        { "@type": "Article", author: [{ "@id": "#p1" }, "Grace Hopper", { name: 42 }], publisher: { "@id": "#org" } },
        { "@type": "Person", "@id": "#p1", name: "Ada Lovelace" },
        { "@type": "schema:NewsMediaOrganization", "@id": "#org", name: "Org", logo: { "@id": "#logo" } },
        { "@type": "ImageObject", "@id": "#logo", contentUrl: "https://x.test/logo.svg" },
        { "@type": ["WebSite"], name: "The Site" },
      ],
    };
    expect(readLinkedData([script(graph)])).toEqual({ ...NONE, author: "Ada Lovelace, Grace Hopper", logo: "https://x.test/logo.svg", siteName: "The Site" });
  });

  it("reads a top-level array and several scripts in order; the first value of each wins", () => {
    const first = [{ "@type": "BreadcrumbList" }, { "@type": "BlogPosting", datePublished: "2026-05-01", author: "Solo" }];
    const second = { "@type": "Corporation", logo: ["", "/corp.png"], datePublished: "1999-01-01" };
    expect(readLinkedData([script(first), script(second)])).toEqual({ ...NONE, datePublished: "2026-05-01", author: "Solo", logo: "/corp.png" });
  });

  it("ignores invalid JSON and values of the wrong kind, and reads the rest", () => {
    const wrongKinds = { "@type": "Organization", logo: { url: 7 }, name: ["x"], datePublished: { date: "2026-01-01" }, author: null };
    expect(readLinkedData(["{ not json", "", "null", "42", script(wrongKinds), script({ dateModified: "2026-02-02" })])).toEqual({
      ...NONE,
      dateModified: "2026-02-02",
    });
  });

  it("stays bounded on hostile JSON: deep nesting and huge arrays are cut, not crashed on", () => {
    const deep = `${"[".repeat(100_000)}{"@type":"Article","datePublished":"2026-01-01"}${"]".repeat(100_000)}`;
    const wide = script(Array.from({ length: 50_000 }, () => ({ "@type": "Thing", datePublished: "2026-01-01" })));
    const started = performance.now();
    expect(readLinkedData([deep]).datePublished).toBeNull();
    // Past the first MAX_NODES objects nothing is looked at.
    expect(readLinkedData([script(Array.from({ length: 2_000 }, () => ({}))), wide])).toEqual(NONE);
    // ~100 ms here alone, ~2 s with the machine loaded 9 deep: the bound is for a runaway, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    // Within the depth bound it is found.
    expect(readLinkedData([script([[[{ datePublished: "2026-01-01" }]]])]).datePublished).toBe("2026-01-01");
  });
});

describe("values", () => {
  it.each([
    ["2026-11-20T08:30:00+01:00", "2026-11-20T07:30:00.000Z"],
    ["2026-11-20T08:30:00.123456-0500", "2026-11-20T13:30:00.123Z"],
    ["2026-11-20 08:30", "2026-11-20T08:30:00.000Z"],
    ["2026-11-20", "2026-11-20T00:00:00.000Z"],
    ["  2024-02-29T23:59:59Z ", "2024-02-29T23:59:59.000Z"],
    ["2026-02-30", null],
    ["2026-13-01", null],
    ["2026-11-20T24:00:00Z", null],
    ["20 November 2026", null],
    ["1", null],
    ["", null],
    [undefined, null],
  ])("isoDate(%j) = %j", (input, expected) => {
    expect(isoDate(input)).toBe(expected);
  });

  it("canonicalizes language tags and refuses what is not one", () => {
    expect(languageTag("en_us")).toBe("en-US");
    expect(languageTag(" EN-gb ")).toBe("en-GB");
    expect(languageTag("de, en")).toBe("de");
    expect(languageTag("english please")).toBeNull();
    expect(languageTag("")).toBeNull();
    expect(languageTag(`en-${"a".repeat(200)}`)).toBeNull();
  });

  it("reads image sizes as positive whole pixels", () => {
    expect(pixels(" 1200 ")).toBe(1200);
    expect(pixels("0")).toBeNull();
    expect(pixels("1200px")).toBeNull();
    expect(pixels("-5")).toBeNull();
    expect(pixels("1e3")).toBeNull();
    expect(pixels("999999")).toBeNull();
  });
});
