import type { Deadline } from "../deadline.js";
import { AppError } from "../errors.js";
import { type Metadata, metadataOf, readWholePage } from "../metadata/extract.js";
import type { Capture } from "../render/capture.js";
import { invalidUrl } from "../render/errors.js";
import { fetchHeadersFor } from "../render/guard/requests.js";
import type { CaptureOptions } from "../render/options.js";
import { readInBrowser } from "./browser.js";
import { browserControls } from "./controls.js";
import { extractContent, mainText, type PageContent, visible } from "./extract.js";
import { extractFields, type FieldSpec, type FieldValue } from "./fields.js";

// A page as content for agents (POST /api/v1/content; docs/api.md, "Content"): read without a
// browser when the static HTML holds the content (the metadata fetch, under the network guard),
// with one when the page is a script shell, a page control needs it or the caller asks (the render
// pipeline's page load, settled as for a screenshot: lib/content/browser.ts), then extracted by
// lib/content.

/** What to read and how. */
export interface ContentRequest {
  readonly url?: string | undefined;
  readonly html?: string | undefined;
  readonly scope: "main" | "page";
  /** "auto": the browser only when the static HTML holds too little text, or a control needs it. */
  readonly render: "auto" | "always" | "never";
  /** Fields to scrape from the visible page (lib/content/fields.ts). */
  readonly extract?: Readonly<Record<string, FieldSpec>> | undefined;
  /** The page controls (for a snapshot, with the screenshot's fields), as a render takes them. */
  readonly page: CaptureOptions;
  /** A snapshot: the page captured as `page` says, in the same load its content is read from. */
  readonly screenshot: boolean;
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
  /** The snapshot's capture, when asked. */
  readonly capture: Capture | null;
}

/** Under this many characters of main text, a page with scripts is rendered in `auto` (a script shell). */
const SHELL_TEXT_CHARS = 200;

/** Where the metadata of a document sent as HTML is read as being (its relative addresses are not used). */
const NO_BASE = "https://document.invalid/";

export async function readContent(request: ContentRequest, deadline: Deadline): Promise<PageRead> {
  let url = request.url ?? null;
  let html = request.html ?? null;
  let capture: Capture | null = null;
  // The static HTML is read unless the browser must run (asked, a snapshot, or a control that acts only there).
  const staticRead = request.render === "never" || (request.render === "auto" && !request.screenshot && browserControls(request.page).length === 0);
  if (url !== null && staticRead) {
    const page = await readWholePage(url, deadline, fetchHeadersFor(request.page, url));
    url = page.url;
    html = page.html;
    if (html === null) throw invalidUrl(`${page.url} is not an HTML page, so it has no text content to read`);
  }
  let content = html !== null && staticRead ? extractContent(html, url, request.scope) : null;
  // A script shell (too little main text, and scripts) is rendered in auto.
  const shell = () => /<script[\s>]/i.test(html!) && (request.scope === "main" ? content!.text : mainText(html!)).length < SHELL_TEXT_CHARS;
  const rendered = content === null || (request.render === "auto" && shell());
  if (rendered) {
    const read = await readInBrowser(url !== null ? { kind: "url", url } : { kind: "html", html: html! }, request.page, request.screenshot, deadline);
    ({ html, url, capture } = read);
    content = extractContent(read.html, url, request.scope);
  }
  if (html === null || content === null) throw new AppError("INTERNAL_ERROR", "The page could not be read.");
  // A document sent as HTML has no address: no favicon is guessed for it.
  const metadata = url === null ? { ...metadataOf(html, NO_BASE), favicon: "" } : metadataOf(html, url);
  const data = request.extract ? extractFields(visible(html), request.extract) : null;
  return { content, url, title: metadata.title, metadata, rendered, data, capture };
}
