import render from "dom-serializer";
import { type Document, elements, parseHtml } from "./dom.js";
import { mainContent } from "./main.js";
import { toMarkdown } from "./markdown.js";
import { toText } from "./text.js";
import { removeInvisible } from "./visible.js";

// Content extraction (docs/api.md, "Content"): a page's HTML in, what a reader of it gets out.

/** What a page holds for a reader: its main content (or its whole body) as Markdown, text and cleaned HTML, and its links. */
export interface PageContent {
  readonly markdown: string;
  readonly text: string;
  /** The cleaned HTML of what was kept. */
  readonly html: string;
  /** Absolute http(s) links of what was kept, with their text, each URL once (first text wins). */
  readonly links: readonly { readonly url: string; readonly text: string }[];
}

/** The visible DOM of `html`: what a reader cannot see removed. */
export const visible = (html: string): Document => {
  const document = parseHtml(html);
  removeInvisible(document);
  return document;
};

/**
 * The content of the page `html` (found at `url`, which its relative links resolve against; null
 * for a document with no address, whose relative links are no links): `scope` "main" keeps the
 * main content as a reader view does, "page" the whole visible body.
 */
export function extractContent(html: string, url: string | null, scope: "main" | "page"): PageContent {
  const root = scope === "main" ? mainContent(() => visible(html)) : visible(html);
  if (!root) return { markdown: "", text: "", html: "", links: [] };
  const seen = new Map<string, string>();
  for (const element of elements(root)) {
    if (element.name !== "a" || !element.attribs.href) continue;
    try {
      const link = url === null ? new URL(element.attribs.href) : new URL(element.attribs.href, url);
      link.hash = "";
      if ((link.protocol === "http:" || link.protocol === "https:") && !seen.has(link.href)) seen.set(link.href, toText(element).replace(/\s+/g, " ").trim());
    } catch {
      // Not a URL: not a link a reader can follow.
    }
  }
  return {
    markdown: toMarkdown(root, url),
    text: toText(root),
    html: render(root, { decodeEntities: true }),
    links: [...seen].map(([href, text]) => ({ url: href, text })),
  };
}

/** The text of `html`'s main content; "" when it has none (the bench's quality measure: bench/content-quality.ts). */
export const mainText = (html: string): string => extractContent(html, null, "main").text;
