import type { Deadline } from "../deadline.js";
import { AppError } from "../errors.js";
import { type Metadata, metadataOf, readWholePage } from "../metadata/extract.js";
import type { Capture } from "../render/capture.js";
import { invalidUrl } from "../render/errors.js";
import { fetchHeadersFor } from "../render/guard/requests.js";
import type { CaptureOptions } from "../render/options.js";
import type { Incomplete } from "../render/page-load.js";
import type { PageLogs } from "../render/page-log.js";
import { readInBrowser } from "./browser.js";
import { browserControls } from "./controls.js";
import { parseHtml } from "./dom.js";
import { extractContent, type PageContent, visible } from "./extract.js";
import { extractFields, type FieldSpec, type FieldValue } from "./fields.js";
import { unprovenStatically } from "./visible.js";

// A page as content for agents (POST /api/v1/content; docs/api.md, "Content"): read without a
// browser when its static HTML proves what a person sees (the metadata fetch, under the network
// guard; lib/content/visible.ts), with one when it does not (any script), a page control needs it
// or the caller asks (the render pipeline's page load, settled as for a screenshot:
// lib/content/browser.ts), then extracted by lib/content.

/** What to read and how. */
export interface ContentRequest {
  readonly url?: string | undefined;
  readonly html?: string | undefined;
  readonly scope: "main" | "page";
  /** "auto": the static HTML when this reader proves what a person sees in it (lib/content/visible.ts), else a browser. */
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
  /** Set when the browser read the page as it stood at the page-load limit. */
  readonly incomplete: Incomplete | null;
  /** What the page did in the browser, when `capture` asked for it. */
  readonly logs?: PageLogs | undefined;
}

/** Where the metadata of a document sent as HTML is read as being (its relative addresses are not used). */
const NO_BASE = "https://document.invalid/";

export async function readContent(request: ContentRequest, deadline: Deadline): Promise<PageRead> {
  let url = request.url ?? null;
  let html = request.html ?? null;
  let capture: Capture | null = null;
  let incomplete: Incomplete | null = null;
  let logs: PageLogs | undefined;
  // The static HTML is read unless the browser must run (asked, a snapshot, or a control that acts only there).
  const staticRead = request.render === "never" || (request.render === "auto" && !request.screenshot && browserControls(request.page).length === 0);
  if (url !== null && staticRead) {
    const page = await readWholePage(url, deadline, fetchHeadersFor(request.page, url));
    url = page.url;
    html = page.html;
    if (html === null) throw invalidUrl(`${page.url} is not an HTML page, so it has no text content to read`);
  }
  // "auto" keeps the static read only when it proves what a reader sees (no scripts, no styles it
  // cannot evaluate); else the browser reads the page.
  const readStatically = html !== null && staticRead && (request.render === "never" || unprovenStatically(parseHtml(html)) === null);
  let content = readStatically ? extractContent(html!, url, request.scope, "static") : null;
  if (content === null) {
    const read = await readInBrowser(url !== null ? { kind: "url", url } : { kind: "html", html: html! }, request.page, request.screenshot, deadline);
    ({ html, url, capture, incomplete, logs } = read);
    content = extractContent(read.html, url, request.scope, "rendered");
  }
  if (html === null || content === null) throw new AppError("INTERNAL_ERROR", "The page could not be read.");
  // A document sent as HTML has no address: no favicon is guessed for it.
  const metadata = url === null ? { ...metadataOf(html, NO_BASE), favicon: "" } : metadataOf(html, url);
  const data = request.extract ? extractFields(visible(html, readStatically ? "static" : "rendered"), request.extract) : null;
  return { content, url, title: metadata.title, metadata, rendered: !readStatically, data, capture, incomplete, logs };
}
