// What a render can be asked for. Render owns these types; the request schemas (lib/api/schemas.ts)
// are checked against them at compile time, so the API cannot offer what a render does not do.

/** What to render: a URL, or a raw HTML document. */
export type RenderSource = { kind: "url"; url: string } | { kind: "html"; html: string };

export type OutputFormat = "png" | "jpeg" | "webp" | "avif" | "pdf";

/** The formats that are images. */
export type ImageFormat = Exclude<OutputFormat, "pdf">;

export type MockupFrame = "browser" | "phone" | "tablet" | "laptop" | "none";

/** How far a page loads before the steps after it: its `load` event, DOMContentLoaded, or the network going idle. */
export type WaitUntil = "load" | "domcontentloaded" | "networkidle";

export type DeviceName = "iphone-15" | "pixel-8" | "ipad" | "desktop-hd";

/** The capture options of a render request (everything but the source and the response form). */
export interface CaptureOptions {
  readonly format: OutputFormat;
  /** CSS px; absent: 1280, or a phone's 390 for a phone mockup (lib/render/viewport.ts). */
  readonly width?: number | undefined;
  /** CSS px; null: from the width (16:10, or a phone's proportions for a phone frame). */
  readonly height: number | null;
  readonly fullPage: boolean;
  readonly darkMode: boolean;
  /** 1 to 3; absent: the device's, or 2. */
  readonly deviceScaleFactor?: number | undefined;
  /** A device preset (lib/render/viewport.ts, DEVICES): its viewport, scale, mobile emulation and user agent; explicit fields win. */
  readonly device?: DeviceName | undefined;
  /** JPEG, WebP and AVIF. */
  readonly quality: number;
  /** A thumbnail of the image (lib/render/encode.ts): its width and/or height in px, and how the capture fits a box of both (default cover). */
  readonly imageWidth?: number | undefined;
  readonly imageHeight?: number | undefined;
  readonly fit?: "cover" | "contain" | "inside" | undefined;
  /** ms to wait after the page loaded. */
  readonly delay: number;
  readonly style?: "mockup" | undefined;
  readonly background: string;
  readonly padding: number;
  readonly borderRadius: number;
  readonly shadow: boolean;
  readonly frame: MockupFrame;
  readonly blockCookieBanners: boolean;
  readonly waitForSelector?: string | undefined;
  /** Absent: the `load` event, or the page as it stands at the page-load limit when it painted content. */
  readonly waitUntil?: WaitUntil | undefined;
  // Page controls (lib/render/controls.ts; docs/api.md, "Page controls").
  /** Capture only the first element matching this selector (its border box). */
  readonly selector?: string | undefined;
  /** Capture only this rectangle of the page, in CSS px. */
  readonly clip?: Clip | undefined;
  /** Hidden (visibility: hidden) / removed from layout (display: none), as CSS rules that also catch content loaded later. */
  readonly hideSelectors: string[];
  readonly removeSelectors: string[];
  /** Clicked after load and cookie banners, then the page is let settle. */
  readonly click?: string | undefined;
  /** A stylesheet added to the page, and a script run in it (awaited if it returns a promise). */
  readonly css?: string | undefined;
  readonly js?: string | undefined;
  /** An IANA time zone, a BCP 47 locale, a position (with the permission granted). */
  readonly timezone?: string | undefined;
  readonly locale?: string | undefined;
  /** ISO 3166-1 alpha-2: the locale and time zone a visitor there has, where `locale` and `timezone` are not given (lib/render/geo.ts). */
  readonly country?: string | undefined;
  /** "auto": the locale and time zone follow the proxy's exit country where it can be known (lib/render/geo.ts). */
  readonly geo?: "auto" | undefined;
  readonly geolocation?: Geolocation | undefined;
  readonly userAgent?: string | undefined;
  /** Absent: print for a paged PDF, screen otherwise. */
  readonly mediaType?: "screen" | "print" | undefined;
  /** PDF options (lib/render/pdf.ts): with `paper`, a paged document; without, the one page sized to the capture. */
  readonly pdf?: PdfOptions | undefined;
  readonly reducedMotion: boolean;
  /** A transparent page background (PNG). */
  readonly omitBackground: boolean;
  /** Extra request headers and basic auth, sent to the target's origin only; cookies for the target (lib/render/guard/requests.ts). */
  readonly headers: Record<string, string>;
  readonly cookies: Cookie[];
  readonly httpAuth?: { readonly username: string; readonly password: string } | undefined;
  /** Requests not made: URL patterns (`*` a wildcard) and resource types. */
  readonly blockRequests: string[];
  readonly blockResources: BlockableResource[];
  /** Requests the shipped ad / tracker filter lists block (lib/render/guard/filter-lists.ts). */
  readonly blockAds: boolean;
  readonly blockTrackers: boolean;
  /** The customer's proxy, "scheme://user:pass@host:port" (lib/render/guard/upstream-proxy.ts): every request of the page goes through it. */
  readonly proxy?: string | undefined;
  /** What the page did, recorded as it loads (lib/render/page-log.ts). */
  readonly capture?: PageLogRequest | undefined;
}

/** The logs a render records: a HAR (with response bodies, capped), the console, the failed and blocked requests. */
export interface PageLogRequest {
  readonly har: boolean;
  readonly harBodies: boolean;
  readonly console: boolean;
  readonly network: boolean;
}

type BlockableResource = "image" | "media" | "font" | "stylesheet" | "script" | "xhr" | "fetch" | "websocket" | "eventsource" | "manifest" | "other";

interface Cookie {
  readonly name: string;
  readonly value: string;
  /** Default: the target's host. */
  readonly domain?: string | undefined;
  readonly path?: string | undefined;
  readonly secure?: boolean | undefined;
  readonly httpOnly?: boolean | undefined;
  readonly sameSite?: "Strict" | "Lax" | "None" | undefined;
  /** Unix seconds. */
  readonly expires?: number | undefined;
}

export type Paper = "A4" | "A3" | "A5" | "Letter" | "Legal" | "Tabloid";

/** A CSS length of the print margin: "10mm", "0.5in", "1cm", "24px" or "0". */
type PrintLength = string;

export interface PdfOptions {
  readonly paper?: Paper | undefined;
  // The rest need `paper` (defaults in lib/render/pdf.ts), but printBackground (default true).
  readonly landscape?: boolean | undefined;
  readonly margin?:
    | PrintLength
    | {
        readonly top?: PrintLength | undefined;
        readonly right?: PrintLength | undefined;
        readonly bottom?: PrintLength | undefined;
        readonly left?: PrintLength | undefined;
      }
    | undefined;
  readonly scale?: number | undefined;
  readonly printBackground?: boolean | undefined;
  /** Chromium's form: "1-5, 8, 11-13". */
  readonly pageRanges?: string | undefined;
}

/** A rectangle of the page in CSS px. */
export interface Clip {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

interface Geolocation {
  readonly latitude: number;
  readonly longitude: number;
  readonly accuracy?: number | undefined;
}
