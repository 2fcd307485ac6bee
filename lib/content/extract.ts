import render from "dom-serializer";
import { type AnyNode, type Document, elements, parseHtml, textOf } from "./dom.js";
import { mainContent } from "./main.js";
import { toMarkdown } from "./markdown.js";
import { toText } from "./text.js";
import { removeInvisible } from "./visible.js";

// Content extraction (docs/api.md, "Content"): a page's HTML in, what a reader of it gets out.

/**
 * What a page holds for a reader: what was kept of it (its main content, or its whole visible body),
 * as Markdown, text or cleaned HTML, and its links. Each is made when first asked for: an answer
 * needs one format, and its links only when asked.
 */
export class PageContent {
  #text: string | undefined;

  constructor(
    private readonly root: AnyNode | null,
    private readonly url: string | null,
  ) {}

  get markdown(): string {
    return this.root ? toMarkdown(this.root, this.url) : "";
  }

  get text(): string {
    this.#text ??= this.root ? toText(this.root) : "";
    return this.#text;
  }

  /** The cleaned HTML of what was kept. */
  get html(): string {
    return this.root ? render(this.root, { decodeEntities: true }) : "";
  }

  /** Absolute http(s) links of what was kept, with their text, each URL once (first text wins). */
  get links(): { url: string; text: string }[] {
    const seen = new Map<string, string>();
    for (const element of this.root ? elements(this.root) : []) {
      if (element.name !== "a" || !element.attribs.href) continue;
      try {
        const link = this.url === null ? new URL(element.attribs.href) : new URL(element.attribs.href, this.url);
        link.hash = "";
        if ((link.protocol === "http:" || link.protocol === "https:") && !seen.has(link.href)) seen.set(link.href, toText(element).replace(/\s+/g, " ").trim());
      } catch {
        // Not a URL: not a link a reader can follow.
      }
    }
    return [...seen].map(([href, text]) => ({ url: href, text }));
  }
}

/**
 * How a page's HTML was read: "static" (its markup and own styles, judged here) or "rendered" (a
 * browser's DOM, what it does not draw marked by lib/content/browser.ts).
 */
export type ReadBy = "static" | "rendered";

/** The visible DOM of `html`: what a reader cannot see removed. */
export const visible = (html: string, readBy: ReadBy): Document => {
  const document = parseHtml(html);
  removeInvisible(document, readBy === "static" ? "static" : "marked");
  return document;
};

/**
 * The content of the page `html` (found at `url`, which its relative links resolve against; null
 * for a document with no address, whose relative links are no links): `scope` "main" keeps the
 * main content as a reader view does, "page" the whole visible body.
 */
export function extractContent(html: string, url: string | null, scope: "main" | "page", readBy: ReadBy): PageContent {
  const document = parseHtml(html);
  // The title and description are in <head>, which is not a reader's text: read before that goes.
  let title = "";
  let description = "";
  for (const element of elements(document)) {
    if (element.name === "title" && !title) title = textOf(element);
    const name = (element.attribs.name ?? element.attribs.property ?? "").toLowerCase();
    if (element.name === "meta" && !description && (name === "description" || name === "og:description")) description = element.attribs.content ?? "";
  }
  removeInvisible(document, readBy === "static" ? "static" : "marked");
  return new PageContent(scope === "main" ? mainContent(() => document.cloneNode(true), title, description) : document, url);
}

/** The text of `html`'s main content, read statically; "" when it has none (the bench's quality measure: bench/content-quality.ts). */
export const mainText = (html: string): string => extractContent(html, null, "main", "static").text;
