import { Parser } from "htmlparser2";
import iconv from "iconv-lite";

// The streaming side of metadata: what the HTML says, collected tag by tag as bytes arrive, so that
// reading can stop as soon as the head has been read (or, with no title anywhere in the head, the
// first h1). docs/api.md's fallbacks are applied afterwards, in extract.ts.

/** A `<link rel=icon|apple-touch-icon>` as written. */
export interface IconLink {
  readonly href: string;
  readonly apple: boolean;
  readonly sizes: string;
  readonly type: string;
}

/** Everything the fallbacks need, as found in the document (first non-empty value of each). */
export interface RawMetadata {
  title: string;
  h1: string;
  /** Meta tags by lower-cased name/property: description, og:*, twitter:*, theme-color. */
  readonly meta: Map<string, string>;
  /** theme-color meta tags that carry a `media` condition (used only when none is unconditional). */
  themeColorWithMedia: string;
  baseHref: string;
  manifest: string;
  readonly icons: IconLink[];
  /** Script elements seen, and visible text characters in the body: what a script-rendered page looks like. */
  scripts: number;
  bodyText: number;
}

const META_KEYS = new Set([
  "description",
  "og:title",
  "og:description",
  "og:image",
  "og:image:url",
  "og:image:secure_url",
  "twitter:title",
  "twitter:description",
  "twitter:image",
  "twitter:image:src",
  "theme-color",
]);

// Elements that belong in a head; any other start tag means the body has begun (even without <body>).
const HEAD_ELEMENTS = new Set(["html", "head", "title", "meta", "link", "base", "script", "style", "noscript", "template"]);
// Elements whose text is not visible text.
const INVISIBLE = new Set(["script", "style", "noscript", "template", "title"]);

const collapse = (text: string) => text.replace(/\s+/g, " ").trim();

/** Collects metadata from HTML text fed in pieces; `done` turns true once nothing more is needed. */
export class MetadataCollector {
  readonly raw: RawMetadata = { title: "", h1: "", meta: new Map(), themeColorWithMedia: "", baseHref: "", manifest: "", icons: [], scripts: 0, bodyText: 0 };
  done = false;
  private readonly parser: Parser;
  private inBody = false;
  private titleText: string | null = null;
  private titleSeen = false;
  private h1Text: string | null = null;
  private invisibleDepth = 0;

  constructor() {
    this.parser = new Parser(
      {
        onopentag: (name, attributes) => this.open(name, attributes),
        onclosetag: (name) => this.close(name),
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

  /** A title from the head itself (title, og:title or twitter:title): then the body is not needed. */
  private get headHasTitle(): boolean {
    return this.raw.title !== "" || this.raw.meta.has("og:title") || this.raw.meta.has("twitter:title");
  }

  private enterBody() {
    if (this.inBody) return;
    this.inBody = true;
    if (this.headHasTitle) this.done = true;
  }

  private open(name: string, attributes: Record<string, string>) {
    if (this.done) return;
    if (INVISIBLE.has(name)) this.invisibleDepth++;
    if (name === "script") this.raw.scripts++;
    if (name === "body" || !HEAD_ELEMENTS.has(name)) this.enterBody();
    if (this.done) return;
    switch (name) {
      case "title":
        // The document's title is its first <title>, even an empty one (as document.title says).
        if (!this.titleSeen && !this.inBody) this.titleText = "";
        break;
      case "h1":
        if (this.raw.h1 === "") this.h1Text = "";
        break;
      case "base":
        if (this.raw.baseHref === "" && attributes.href?.trim()) this.raw.baseHref = attributes.href.trim();
        break;
      case "meta": {
        const key = (attributes.property ?? attributes.name ?? "").trim().toLowerCase();
        const content = collapse(attributes.content ?? "");
        if (!META_KEYS.has(key) || content === "") break;
        if (key === "theme-color" && attributes.media?.trim()) {
          if (this.raw.themeColorWithMedia === "") this.raw.themeColorWithMedia = content;
        } else if (!this.raw.meta.has(key)) {
          this.raw.meta.set(key, content);
        }
        break;
      }
      case "link": {
        const rel = (attributes.rel ?? "").toLowerCase().split(/\s+/);
        const href = (attributes.href ?? "").trim();
        if (href === "") break;
        if (rel.includes("manifest")) {
          if (this.raw.manifest === "") this.raw.manifest = href;
        } else if (rel.includes("icon") || rel.includes("apple-touch-icon") || rel.includes("apple-touch-icon-precomposed")) {
          this.raw.icons.push({
            href,
            apple: !rel.includes("icon"),
            sizes: (attributes.sizes ?? "").toLowerCase(),
            type: (attributes.type ?? "").toLowerCase(),
          });
        }
        break;
      }
    }
  }

  private close(name: string) {
    if (this.done) return;
    if (INVISIBLE.has(name) && this.invisibleDepth > 0) this.invisibleDepth--;
    if (name === "title" && this.titleText !== null) {
      this.raw.title = collapse(this.titleText);
      this.titleText = null;
      this.titleSeen = true;
    } else if (name === "h1" && this.h1Text !== null) {
      this.raw.h1 = collapse(this.h1Text);
      this.h1Text = null;
      // The h1 is read only because the head had no title: it is the last thing wanted.
      if (this.raw.h1 !== "") this.done = true;
    } else if (name === "head") {
      this.enterBody();
    }
  }

  private text(text: string) {
    if (this.done) return;
    if (this.titleText !== null) this.titleText += text;
    if (this.h1Text !== null) this.h1Text += text;
    if (this.inBody && this.invisibleDepth === 0) this.raw.bodyText += text.trim().length;
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
