import type { Deadline } from "../deadline.js";
import { AppError } from "../errors.js";
import { type Metadata, metadataOf, readWholePage } from "../metadata/extract.js";
import { renderedHtml } from "../metadata/rendered.js";
import { invalidUrl } from "../render/errors.js";
import { extractContent, mainText, type PageContent, visible } from "./extract.js";
import { extractFields, type FieldSpec, type FieldValue } from "./fields.js";
import { HIDDEN_MARK } from "./visible.js";

// A page as content for agents (POST /api/v1/content; docs/api.md, "Content"): read without a
// browser when the static HTML holds the content (the metadata fetch, under the network guard),
// with one when the page is a script shell or the caller asks (the render pipeline's page load),
// then extracted by lib/content.

/** What to read and how. */
export interface ContentRequest {
  readonly url?: string;
  readonly html?: string;
  readonly scope: "main" | "page";
  /** "auto": the browser only when the static HTML holds too little text. */
  readonly render: "auto" | "always" | "never";
  /** Fields to scrape from the visible page (lib/content/fields.ts). */
  readonly extract?: Readonly<Record<string, FieldSpec>>;
}

export interface PageRead {
  /** What was kept, in every format (each made when asked for). */
  readonly content: PageContent;
  /** The final URL (after redirects); null for a document sent as `html`. */
  readonly url: string | null;
  readonly title: string;
  readonly metadata: Metadata;
  /** Whether a browser ran the page's scripts. */
  readonly rendered: boolean;
  /** The scraped fields, when asked. */
  readonly data: Record<string, FieldValue> | null;
}

/** Under this many characters of main text, a page with scripts is rendered in `auto` (a script shell). */
const SHELL_TEXT_CHARS = 200;

/** Where the metadata of a document sent as HTML is read as being (its relative addresses are not used). */
const NO_BASE = "https://document.invalid/";

export async function readContent(request: ContentRequest, deadline: Deadline): Promise<PageRead> {
  let url = request.url ?? null;
  let html = request.html ?? null;
  let rendered = false;
  if (url !== null && request.render !== "always") {
    const page = await readWholePage(url, deadline);
    url = page.url;
    html = page.html;
    if (html === null) throw invalidUrl(`${page.url} is not an HTML page, so it has no text content to read`);
  }
  // Read statically unless asked otherwise; a script shell (too little main text, and scripts) is rendered in auto.
  let content = html !== null && request.render !== "always" ? extractContent(html, url, request.scope) : null;
  const shell = () => /<script[\s>]/i.test(html!) && (request.scope === "main" ? content!.text : mainText(html!)).length < SHELL_TEXT_CHARS;
  if (content === null || (request.render === "auto" && shell())) {
    const page = await renderedHtml(url !== null ? { kind: "url", url } : { kind: "html", html: html! }, deadline, HIDDEN_MARK);
    html = page.html;
    if (url !== null) url = page.url;
    rendered = true;
    content = extractContent(html, url, request.scope);
  }
  if (html === null) throw new AppError("INTERNAL_ERROR", "The page could not be read.");
  // A document sent as HTML has no address: no favicon is guessed for it.
  const metadata = url === null ? { ...metadataOf(html, NO_BASE), favicon: "" } : metadataOf(html, url);
  const data = request.extract ? extractFields(visible(html), request.extract) : null;
  return { content, url, title: metadata.title, metadata, rendered, data };
}
