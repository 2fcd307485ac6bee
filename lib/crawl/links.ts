import { Parser } from "htmlparser2";
import { normalizeUrl } from "./urls.js";

// What a crawler reads of a page's HTML besides its content (docs/crawl.md): the links it may
// follow (<a href>, <area href>, each resolved against the page's <base href>, normalised), its
// canonical URL, and whether its robots meta tag asks that its links not be followed.

/** Links read from one page at most: a page of a million anchors costs what this many do. */
const MAX_LINKS_PER_PAGE = 1_000;

export interface PageLinks {
  /** Each followable link once, normalised, in the order they appear. */
  readonly links: string[];
  /** `<link rel="canonical">`, normalised, when the page names one. */
  readonly canonical: string | null;
  /** `<meta name="robots">` (or one for Shotline) says nofollow or none. */
  readonly nofollow: boolean;
}

/** The links, canonical URL and robots meta of `html`, a page at `url`. */
export function linksOf(html: string, url: string): PageLinks {
  let base = url;
  let baseSeen = false;
  const raw: string[] = [];
  let canonical: string | null = null;
  let nofollow = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "base" && !baseSeen && attributes.href !== undefined) {
          baseSeen = true;
          base = normalizeUrl(attributes.href, url) ?? url;
        } else if ((name === "a" || name === "area") && attributes.href !== undefined) {
          if (raw.length < MAX_LINKS_PER_PAGE * 4) raw.push(attributes.href);
        } else if (name === "link" && canonical === null && /(^|\s)canonical(\s|$)/i.test(attributes.rel ?? "") && attributes.href) {
          canonical = normalizeUrl(attributes.href, base);
        } else if (
          name === "meta" &&
          /^(robots|shotline)$/i.test(attributes.name ?? "") &&
          /(^|[\s,])(nofollow|none)([\s,]|$)/i.test(attributes.content ?? "")
        ) {
          nofollow = true;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  const links = new Set<string>();
  for (const href of raw) {
    const link = normalizeUrl(href, base);
    if (link !== null) links.add(link);
    if (links.size >= MAX_LINKS_PER_PAGE) break;
  }
  return { links: [...links], canonical, nofollow };
}
