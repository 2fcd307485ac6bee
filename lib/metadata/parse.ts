import { Parser } from "htmlparser2";
import iconv from "iconv-lite";

// The streaming side of metadata: what the HTML says, collected tag by tag as bytes arrive, so that
// reading can stop as soon as the head has been read (as a browser reads it) and the title is known.
// docs/api.md's fallbacks are applied afterwards, in extract.ts.

/** A `<link rel=icon|apple-touch-icon>` as written. */
export interface IconLink {
  readonly href: string;
  readonly apple: boolean;
  readonly sizes: string;
  readonly type: string;
}

/** Everything the fallbacks need, as found in the document (first non-empty value of each). */
export interface RawMetadata {
  /** The first `<title>` in the document (document.title's), "" when empty or absent. */
  title: string;
  h1: string;
  /** `<html lang>` as written. */
  lang: string;
  /** Meta tags of the head by lower-cased name/property (META_KEYS). og:image's width, height and alt are the first image's. */
  readonly meta: Map<string, string>;
  /** theme-color meta tags that carry a `media` condition (used only when none is unconditional). */
  themeColorWithMedia: string;
  baseHref: string;
  manifest: string;
  canonical: string;
  readonly icons: IconLink[];
  /** `<link rel=alternate>` hrefs of RSS, Atom and JSON feeds, in document order. */
  readonly feeds: string[];
  /** The text of each `<script type=application/ld+json>` in the head (at most MAX_JSON_LD_SCRIPTS, each at most MAX_JSON_LD_CHARS). */
  readonly jsonLd: string[];
  /** Script elements seen, and visible text characters in the body: what a script-rendered page looks like. */
  scripts: number;
  bodyText: number;
}

const META_KEYS = new Set([
  "description",
  "author",
  "application-name",
  "content-language",
  "theme-color",
  "og:title",
  "og:description",
  "og:image",
  "og:image:url",
  "og:image:secure_url",
  "og:image:width",
  "og:image:height",
  "og:image:alt",
  "og:site_name",
  "og:type",
  "og:url",
  "og:locale",
  "og:updated_time",
  "article:author",
  "article:published_time",
  "article:modified_time",
  "twitter:title",
  "twitter:description",
  "twitter:image",
  "twitter:image:src",
  "twitter:image:alt",
  "twitter:card",
  "twitter:site",
]);
// Open Graph's structured properties of an image: they describe the og:image before them.
const OG_IMAGE_DETAILS = new Set(["og:image:width", "og:image:height", "og:image:alt"]);
const FEED_TYPES = new Set(["application/rss+xml", "application/atom+xml", "application/feed+json"]);
// Feed links kept as written (more than the answer lists: some may be duplicates or unusable).
const MAX_FEED_LINKS = 20;
const MAX_ICONS = 50;
/** JSON-LD larger than this is not read (real ones are a few KB); nor more scripts than this. */
export const MAX_JSON_LD_CHARS = 256 * 1024;
const MAX_JSON_LD_SCRIPTS = 8;

// Where a browser's tree builder is (HTML's insertion modes, with scripting on, as in a browser).
// The head begins at <head> or at the first element that belongs in one; it ends at </head>, at
// <body>, or at the first element or text that cannot be in a head (tags between </head> and the
// body are still the head's); then the body begins.
type Mode = "before-head" | "in-head" | "after-head" | "in-body";
// Elements that belong in a head; any other start tag begins the body.
const HEAD_ELEMENTS = new Set(["base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes", "style", "script", "template"]);
// Elements read as raw text by htmlparser2 (their text is not the page's text, nor stray text in a head).
const RAW_TEXT = new Set(["script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "plaintext"]);
// Text that ends a head: anything but HTML whitespace. A byte order mark is let through: an included
// file's BOM in the middle of a head (a PHP classic) would otherwise end it for a browser too.
const STRAY_TEXT = /[^\t\n\f\r \uFEFF]/;

const collapse = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * Collects metadata from HTML text fed in pieces, reading the head as a browser does; `done` turns
 * true once nothing more is needed: the head has been read and the document's title is known
 * (document.title is the first <title> anywhere, so without one in the head reading goes on), and,
 * when no title says anything, the first h1 has been read.
 */
export class MetadataCollector {
  readonly raw: RawMetadata = {
    title: "",
    h1: "",
    lang: "",
    meta: new Map(),
    themeColorWithMedia: "",
    baseHref: "",
    manifest: "",
    canonical: "",
    icons: [],
    feeds: [],
    jsonLd: [],
    scripts: 0,
    bodyText: 0,
  };
  done = false;
  private readonly parser: Parser;
  private mode: Mode = "before-head";
  /**
   * The body began before the head (a saved page's stray markup before <head>): a browser puts the
   * document's own head tags in the body then, where DOM readers find them; so they are read until
   * <body> or </head>, and a <head> that comes is read as the head.
   */
  private strayBody = false;
  private langSet = false;
  private titleSeen = false;
  private titleText: string | null = null;
  private h1Text: string | null = null;
  private jsonLdText: string | null = null;
  private rawText: string | null = null;
  // The contents of <noscript> (raw text with scripting on) and <template> (not in the document) are skipped.
  private skipping: { name: string; depth: number } | null = null;
  // Inside <svg> or <math>: a <title> there is not the document's.
  private foreignDepth = 0;
  private ogImages = 0;

  constructor() {
    this.parser = new Parser(
      {
        onopentag: (name, attributes) => this.open(name, attributes),
        onclosetag: (name, implied) => this.close(name, implied),
        ontext: (text) => this.text(text),
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  write(text: string): void {
    if (!this.done) this.parser.write(text);
  }

  end(): void {
    if (!this.done) this.parser.end();
    this.done = true;
  }

  /** Whether a tag seen now belongs to the head. */
  private get inHead(): boolean {
    return this.mode === "in-head" || this.mode === "after-head" || this.strayBody;
  }

  private beginBody() {
    if (this.mode === "before-head") this.strayBody = true;
    this.mode = "in-body";
  }

  /** Done once the body has begun, the title is known and, when no title says anything, the h1 too. */
  private settle() {
    if (this.mode !== "in-body" || this.strayBody || !this.titleSeen) return;
    const titled = this.raw.title !== "" || this.raw.meta.has("og:title") || this.raw.meta.has("twitter:title");
    if (titled || this.raw.h1 !== "") this.done = true;
  }

  private open(name: string, attributes: Record<string, string>) {
    if (this.done) return;
    if (this.skipping) {
      if (name === this.skipping.name && name === "template") this.skipping.depth++;
      return;
    }
    if (name === "noscript" || name === "template") {
      // Both belong in a head, except a <noscript> after </head>, which begins the body.
      if (this.mode === "before-head") this.mode = "in-head";
      else if (this.mode === "after-head" && name === "noscript") this.beginBody();
      this.settle();
      this.skipping = { name, depth: 1 };
      return;
    }
    if (name === "svg" || name === "math") this.foreignDepth++;
    if (RAW_TEXT.has(name)) this.rawText = name;
    if (name === "script") this.raw.scripts++;
    switch (name) {
      case "html":
        // Later <html> tags add only attributes the first lacked (as browsers merge them).
        if (!this.langSet && attributes.lang !== undefined) {
          this.langSet = true;
          this.raw.lang = attributes.lang.trim();
        }
        return;
      case "head":
        if (this.mode === "before-head" || this.strayBody) {
          this.mode = "in-head";
          this.strayBody = false;
        }
        return;
      case "body":
        this.strayBody = false;
        this.mode = "in-body";
        this.settle();
        return;
    }
    if (this.foreignDepth === 0 && HEAD_ELEMENTS.has(name)) {
      if (this.mode === "before-head") this.mode = "in-head";
    } else if (this.mode !== "in-body") {
      this.beginBody();
      this.settle();
    }
    if (this.done) return;
    switch (name) {
      case "title":
        // The document's title is its first <title>, even an empty one, wherever it is (document.title).
        if (!this.titleSeen && this.foreignDepth === 0) this.titleText = "";
        break;
      case "h1":
        if (this.raw.h1 === "") this.h1Text = "";
        break;
      case "base":
        // The first <base href> anywhere is the document's base URL.
        if (this.raw.baseHref === "" && attributes.href?.trim()) this.raw.baseHref = attributes.href.trim();
        break;
      case "meta":
        if (this.inHead) this.meta(attributes);
        break;
      case "link":
        if (this.inHead) this.link(attributes);
        break;
      case "script":
        if (
          this.inHead &&
          this.raw.jsonLd.length < MAX_JSON_LD_SCRIPTS &&
          (attributes.type ?? "").split(";")[0]!.trim().toLowerCase() === "application/ld+json"
        )
          this.jsonLdText = "";
        break;
    }
  }

  private meta(attributes: Record<string, string>) {
    const key = (attributes.property ?? attributes.name ?? attributes["http-equiv"] ?? "").trim().toLowerCase();
    const content = collapse(attributes.content ?? "");
    if (!META_KEYS.has(key) || content === "") return;
    if (key === "og:image") this.ogImages++;
    // A width, height or alt after a second og:image is that image's.
    if (OG_IMAGE_DETAILS.has(key) && this.ogImages > 1) return;
    if (key === "theme-color" && attributes.media?.trim()) {
      if (this.raw.themeColorWithMedia === "") this.raw.themeColorWithMedia = content;
    } else if (!this.raw.meta.has(key)) {
      this.raw.meta.set(key, content);
    }
  }

  private link(attributes: Record<string, string>) {
    const rel = (attributes.rel ?? "").toLowerCase().split(/\s+/);
    const href = (attributes.href ?? "").trim();
    const type = (attributes.type ?? "").trim().toLowerCase();
    if (href === "") return;
    if (rel.includes("manifest")) {
      if (this.raw.manifest === "") this.raw.manifest = href;
    } else if (rel.includes("canonical")) {
      if (this.raw.canonical === "") this.raw.canonical = href;
    } else if (rel.includes("alternate") && FEED_TYPES.has(type)) {
      if (this.raw.feeds.length < MAX_FEED_LINKS) this.raw.feeds.push(href);
    } else if (rel.includes("icon") || rel.includes("apple-touch-icon") || rel.includes("apple-touch-icon-precomposed")) {
      if (this.raw.icons.length < MAX_ICONS) this.raw.icons.push({ href, apple: !rel.includes("icon"), sizes: (attributes.sizes ?? "").toLowerCase(), type });
    }
  }

  private close(name: string, implied: boolean) {
    if (this.done) return;
    if (this.skipping) {
      if (name === this.skipping.name && --this.skipping.depth === 0) this.skipping = null;
      return;
    }
    if (name === this.rawText) this.rawText = null;
    if ((name === "svg" || name === "math") && this.foreignDepth > 0) this.foreignDepth--;
    if (name === "title" && this.titleText !== null) {
      this.raw.title = collapse(this.titleText);
      this.titleText = null;
      this.titleSeen = true;
      this.settle();
    } else if (name === "h1" && this.h1Text !== null) {
      this.raw.h1 = collapse(this.h1Text);
      this.h1Text = null;
      this.settle();
    } else if (name === "script" && this.jsonLdText !== null) {
      if (this.jsonLdText.length <= MAX_JSON_LD_CHARS) this.raw.jsonLd.push(this.jsonLdText);
      this.jsonLdText = null;
    } else if (name === "head" && !implied) {
      if (this.mode === "before-head" || this.mode === "in-head") this.mode = "after-head";
      if (this.strayBody) {
        this.strayBody = false;
        this.settle();
      }
    }
  }

  private text(text: string) {
    if (this.done || this.skipping) return;
    if (this.titleText !== null) this.titleText += text;
    if (this.h1Text !== null) this.h1Text += text;
    if (this.jsonLdText !== null && this.jsonLdText.length <= MAX_JSON_LD_CHARS) this.jsonLdText += text;
    if (this.rawText !== null) return;
    if (this.mode !== "in-body") {
      if (!STRAY_TEXT.test(text)) return;
      this.beginBody();
      this.settle();
    }
    this.raw.bodyText += text.trim().length;
  }
}

// Labels HTML treats as windows-1252 (the WHATWG Encoding standard), and ones a <meta> may not declare.
const WINDOWS_1252 = new Set(["iso-8859-1", "iso8859-1", "latin1", "l1", "us-ascii", "ascii", "cp819", "ibm819", "iso_8859-1", "x-user-defined"]);

/** The encoding to decode with, from a label (header or meta); undefined when unknown. */
function encodingFor(label: string | undefined, fromMeta = false): string | undefined {
  if (!label) return undefined;
  const name = label.trim().toLowerCase();
  if (WINDOWS_1252.has(name)) return "windows-1252";
  // A document that could declare itself in ASCII-compatible bytes is not UTF-16 (HTML spec).
  if (fromMeta && name.startsWith("utf-16")) return "utf-8";
  return iconv.encodingExists(name) ? name : undefined;
}

/** Bytes needed before a <meta charset> can be looked for (the HTML spec's prescan window). */
export const PRESCAN_BYTES = 1024;

/** The document's encoding: a byte order mark, then the header's charset, then a <meta> in the first 1 KB, else UTF-8. */
export function sniffEncoding(head: Buffer, headerCharset: string | undefined): string {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return "utf-8";
  if (head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  const fromHeader = encodingFor(headerCharset);
  if (fromHeader) return fromHeader;
  const prescan = head
    .subarray(0, PRESCAN_BYTES)
    .toString("latin1")
    .replace(/<!--[\s\S]*?-->/g, "");
  for (const tag of prescan.match(/<meta\b[^>]*>/gi) ?? []) {
    const declared = /charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag)?.[1];
    const encoding = encodingFor(declared, true);
    if (encoding) return encoding;
  }
  return "utf-8";
}

/** A decoder for `encoding` that keeps multi-byte characters split across chunks intact (iconv-lite strips BOMs). */
export const decoderFor = (encoding: string) => iconv.getDecoder(encoding);
