import { compile } from "css-select";
import { z } from "zod";
import { imitatesLatinDomain } from "../billing/emails.js";
import { config } from "../config.js";
import { browserControls } from "../content/controls.js";
import { hasCredentials } from "../redacted.js";
import { type AnimationOptions, animationRefusal } from "../render/animate/animate.js";
import { COUNTRIES, countryDefaults } from "../render/geo.js";
import { targetKey } from "../render/guard/network-guard.js";
import { literalRefusal, parseProxy } from "../render/guard/upstream-proxy.js";
import { MAX_OUTPUT_PIXELS, outputPixels } from "../render/limits.js";
import { BACKGROUND_PRESETS, isBackgroundPreset } from "../render/mockup/backgrounds.js";
import type { CaptureOptions, RenderSource } from "../render/options.js";
import { MAX_PDF_PAGES } from "../render/pdf.js";
import { viewportFor } from "../render/viewport.js";
import { MAX_URL_CHARS } from "../text.js";

// One zod schema per request body (docs/api.md), with its defaults.
// Messages say the rule; lib/http/validate.ts prefixes the field name.

const integer = (min: number, max: number) => {
  const rule = `must be an integer from ${min} to ${max}`;
  return z.number({ error: rule }).int({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
};

export const number = (min: number, max: number) => {
  const rule = `must be a number from ${min} to ${max}`;
  return z.number({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
};

export const boolean = () => z.boolean({ error: "must be true or false" });

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.map((v) => `"${v}"`).join(", ")}` });

const HEX_COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const BACKGROUND_RULE = `must be a preset (${Object.keys(BACKGROUND_PRESETS)
  .map((name) => `"${name}"`)
  .join(", ")}) or a hex colour like "#1e293b"`;

/** Largest accepted `html` document, in UTF-8 bytes (docs/api.md: 500 KB). */
export const MAX_HTML_BYTES = 500 * 1024;
/** The longest a render may be cached: 30 days. */
const MAX_CACHE_TTL_SECONDS = 2_592_000;

export const httpUrl = z
  .string({ error: "must be a string holding an http:// or https:// URL" })
  .max(MAX_URL_CHARS, { error: `must be at most ${MAX_URL_CHARS} characters` })
  .refine(
    (value) => {
      if (!URL.canParse(value)) return false;
      const { protocol, hostname } = new URL(value);
      return (protocol === "http:" || protocol === "https:") && hostname.length > 0;
    },
    { error: "must be an absolute URL starting with http:// or https://" },
  )
  .meta({ format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]", examples: ["https://example.com"] });

const cssSelector = () =>
  z
    .string({ error: "must be a CSS selector string" })
    .trim()
    .min(1, { error: "must be a non-empty CSS selector" })
    .max(1024, { error: "must be at most 1024 characters" })
    .meta({ pattern: "\\S", examples: ["h1", "#main", ".cookie-banner", "article p:first-of-type", "a[href^='/docs']"] });

const MAX_SELECTORS = 50;
export const selectorList = () =>
  z.array(cssSelector(), { error: "must be a list of CSS selectors" }).max(MAX_SELECTORS, { error: `must hold at most ${MAX_SELECTORS} selectors` });

/**
 * A bound in UTF-8 bytes as JSON Schema can state it: a string of this many characters (UTF-16
 * code units, at most 3 bytes each) always fits; the description says the real rule.
 */
const utf8Bytes = (bytes: number) => ({
  maxLength: Math.floor(bytes / 3),
  description: `At most ${bytes / 1024} KB as UTF-8 (${Math.floor(bytes / 3)} characters always fit).`,
});

/** Largest `css` and `js`, in UTF-8 bytes. */
const MAX_INJECTED_BYTES = 100 * 1024;
const injected = (what: string) =>
  z
    .string({ error: `must be a string of ${what}` })
    .refine((v) => Buffer.byteLength(v, "utf8") <= MAX_INJECTED_BYTES, { error: `must be at most ${MAX_INJECTED_BYTES / 1024} KB` })
    .meta(utf8Bytes(MAX_INJECTED_BYTES));

const TIME_ZONES = new Set([...Intl.supportedValuesOf("timeZone"), "UTC"]);
// A BCP 47 tag as the documents state it: language, then optional script, region and variants.
const LOCALE = /^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*$/;
const isLocale = (value: string) => {
  try {
    return LOCALE.test(value) && Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
};

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `word` as a pattern that matches it in any case ("te" -> "[Tt][Ee]"). */
const caseless = (word: string) => [...word].map((c) => (/[a-z]/.test(c) ? `[${c.toUpperCase()}${c}]` : c)).join("");
const HEADER_VALUE = /^[\x20-\x7e\t]*$/;
// Headers the browser or the HTTP layer owns, or that another field sets.
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "upgrade",
  "trailer",
  "cookie",
  "authorization",
  "proxy-authorization",
  "expect",
]);
const MAX_HEADERS = 50;
const MAX_COOKIES = 50;

const headers = z
  .record(
    z.string(),
    z
      .string({ error: "values must be strings" })
      .max(4096, { error: "values must be at most 4096 characters" })
      .regex(HEADER_VALUE, { error: "values must be printable ASCII without line breaks" }),
    { error: "must be an object of header names to values" },
  )
  .refine((h) => Object.keys(h).length <= MAX_HEADERS, { error: `must hold at most ${MAX_HEADERS} headers` })
  .refine((h) => Object.keys(h).every((name) => TOKEN.test(name) && name.length <= 256), { error: "names must be HTTP header names (at most 256 characters)" })
  .refine((h) => !Object.keys(h).some((name) => FORBIDDEN_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith("proxy-")), {
    error: `may not set ${[...FORBIDDEN_HEADERS].join(", ")} or proxy-* (use cookies and httpAuth)`,
  })
  .meta({
    maxProperties: MAX_HEADERS,
    // A header name, but none of the forbidden ones in any case (JSON Schema's patterns have no flags).
    propertyNames: {
      maxLength: 256,
      pattern: `^(?!(?:${[...FORBIDDEN_HEADERS].map(caseless).join("|")})$)(?!${caseless("proxy-")})${TOKEN.source.slice(1)}`,
    },
  });

const cookie = z.strictObject(
  {
    name: z.string().regex(TOKEN, { error: "must be a cookie name" }).max(256, { error: "must be at most 256 characters" }),
    value: z
      .string({ error: "must be a string" })
      .max(4096, { error: "must be at most 4096 characters" })
      .regex(/^[\x20-\x7e]*$/, { error: "must be printable ASCII" })
      .regex(/^[^;]*$/, { error: 'must not contain ";"' }),
    domain: z
      .string()
      .min(1)
      .max(253)
      .regex(/^\.?[A-Za-z0-9.-]+$/, { error: "must be a host name" })
      .optional(),
    path: z.string().startsWith("/", { error: 'must start with "/"' }).max(1024).optional(),
    secure: boolean().optional(),
    httpOnly: boolean().optional(),
    sameSite: oneOf(["Strict", "Lax", "None"]).optional(),
    expires: integer(0, 2 ** 31 - 1).optional(),
  },
  { error: "must be {name, value, domain?, path?, secure?, httpOnly?, sameSite?, expires?}" },
);

// A print margin: a CSS length Chromium takes, at most 50 mm (5 cm, 2 in, 192 px), so the paper
// keeps room for the page. One pattern is the whole rule, so the documents state it exactly.
const PRINT_LENGTH = new RegExp(
  `^(?:0|${[
    "(?:50(?:\\.0{1,4})?|[1-4]?\\d(?:\\.\\d{1,4})?)mm",
    "(?:5(?:\\.0{1,4})?|[0-4](?:\\.\\d{1,4})?)cm",
    "(?:2(?:\\.0{1,4})?|[01](?:\\.\\d{1,4})?)in",
    "(?:192(?:\\.0{1,4})?|(?:1[0-8]\\d|19[01]|\\d{1,2})(?:\\.\\d{1,4})?)px",
  ].join("|")})$`,
);
const printLength = z
  .string({ error: 'must be a length like "10mm", "0.5in", "1cm" or "24px"' })
  .regex(PRINT_LENGTH, { error: 'must be a length like "10mm", "0.5in", "1cm" or "24px", at most 50 mm (5 cm, 2 in, 192 px)' });

// "1-5, 8, 11-13": pages from 1 to MAX_PDF_PAGES; a range written high to low is read low to high.
// The pattern is the whole rule (numbers spelled out), so the documents state it exactly.
const PAGE = `(?:${Array.from({ length: MAX_PDF_PAGES }, (_, i) => MAX_PDF_PAGES - i).join("|")})`;
const PAGE_RANGES = new RegExp(`^\\s*${PAGE}(?:\\s*-\\s*${PAGE})?\\s*(?:,\\s*${PAGE}(?:\\s*-\\s*${PAGE})?\\s*)*$`);
const pageRanges = z
  .string({ error: 'must be page ranges like "1-5, 8, 11-13"' })
  .max(200, { error: "must be at most 200 characters" })
  .regex(PAGE_RANGES, { error: `must be page ranges like "1-5, 8, 11-13", pages 1 to ${MAX_PDF_PAGES}` })
  .overwrite((v) =>
    v
      .split(",")
      .map((range) => {
        const [first, last = first] = range.split("-").map((page) => Number(page.trim()));
        return first! <= last! ? range.trim() : `${last}-${first}`;
      })
      .join(", "),
  );

const pdfOptions = z
  .strictObject(
    {
      paper: oneOf(["A4", "A3", "A5", "Letter", "Legal", "Tabloid"]).optional(),
      landscape: boolean().optional(),
      margin: z
        .union(
          [
            printLength,
            z.strictObject({ top: printLength.optional(), right: printLength.optional(), bottom: printLength.optional(), left: printLength.optional() }),
          ],
          {
            error: 'must be a length like "10mm" or {top?, right?, bottom?, left?}',
          },
        )
        .optional(),
      scale: number(0.1, 2).optional(),
      printBackground: boolean().optional(),
      pageRanges: pageRanges.optional(),
    },
    { error: "must be {paper?, landscape?, margin?, scale?, printBackground?, pageRanges?}" },
  )
  .meta({ dependentRequired: { landscape: ["paper"], margin: ["paper"], scale: ["paper"], pageRanges: ["paper"] } });

// (Percent-escapes of ASCII here: the service takes any escapes that decode to UTF-8.)
const USERINFO = "(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[2-7][0-9A-Fa-f])*";
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
// A name's last label starts with a letter (all digits, a URL parser reads it as an IPv4 address).
const TOP_LABEL = "[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
/**
 * A proxy URL's shape, as the published schemas state it: by host name (the service takes a public
 * IP address too, and any escapes that decode to UTF-8; lib/render/guard/upstream-proxy.ts checks it).
 */
const PROXY_URL = new RegExp(
  `^(?:https?|socks5)://(?:${USERINFO}(?::${USERINFO})?@)?(?:${LABEL}\\.)*${TOP_LABEL}(?::(?:[1-9]\\d{0,3}|[1-5]\\d{4}|6[0-4]\\d{3}|65[0-4]\\d{2}|655[0-2]\\d|6553[0-5]))?/?$`,
);

// Fields shared by the URL and the HTML screenshot requests; defaults from docs/api.md.
export const renderFields = {
  format: oneOf(["png", "jpeg", "webp", "avif", "pdf"]).default("png"),
  // No schema default (a `device` brings its own), but the documents state the usual one.
  width: integer(320, 3840).optional().meta({ default: 1280, description: "Viewport width in CSS px; a device preset brings its own." }),
  height: integer(100, 16384).nullable().default(null),
  fullPage: boolean().default(false),
  darkMode: boolean().default(false),
  deviceScaleFactor: number(1, 3).optional().meta({ default: 2, description: "Device pixels per CSS px; a device preset brings its own." }),
  device: oneOf(["iphone-15", "pixel-8", "ipad", "desktop-hd"]).optional(),
  quality: integer(1, 100).default(80),
  imageWidth: integer(1, 8192).optional(),
  imageHeight: integer(1, 8192).optional(),
  fit: oneOf(["cover", "contain", "inside"]).optional(),
  delay: integer(0, 10_000).default(0),
  style: oneOf(["mockup"]).optional(),
  background: z
    .string({ error: BACKGROUND_RULE })
    .refine((v) => isBackgroundPreset(v) || HEX_COLOUR.test(v), { error: BACKGROUND_RULE })
    .meta({ pattern: `^(?:${Object.keys(BACKGROUND_PRESETS).join("|")}|#[0-9A-Fa-f]{3}|#[0-9A-Fa-f]{6})$` })
    .default("gradient"),
  padding: integer(0, 512).default(64),
  borderRadius: integer(0, 256).default(12),
  shadow: boolean().default(true),
  frame: oneOf(["browser", "phone", "tablet", "laptop", "none"]).default("browser"),
  blockCookieBanners: boolean().default(false),
  waitForSelector: cssSelector().optional(),
  waitUntil: oneOf(["load", "domcontentloaded", "networkidle"]).optional(),
  selector: cssSelector().optional(),
  clip: z
    .strictObject(
      { x: integer(0, 100_000), y: integer(0, 100_000), width: integer(1, 3840), height: integer(1, 16384) },
      { error: "must be {x, y, width, height} in CSS px" },
    )
    .optional(),
  hideSelectors: selectorList().default([]),
  removeSelectors: selectorList().default([]),
  click: cssSelector().optional(),
  css: injected("CSS").optional(),
  js: injected("JavaScript").optional(),
  timezone: z
    .string({ error: 'must be an IANA time zone like "Europe/Paris"' })
    .refine((v) => TIME_ZONES.has(v), { error: 'must be an IANA time zone like "Europe/Paris"' })
    .meta({ enum: [...TIME_ZONES].sort() })
    .optional(),
  locale: z
    .string({ error: 'must be a locale like "fr-FR"' })
    .max(35, { error: "must be at most 35 characters" })
    .refine(isLocale, { error: 'must be a locale like "fr-FR"' })
    .meta({ pattern: LOCALE.source, examples: ["fr-FR", "en", "zh-Hant-TW", "es-419"] })
    .optional(),
  country: z
    .string({ error: 'must be a country code like "DE" (ISO 3166-1 alpha-2, upper case)' })
    .refine((v) => countryDefaults(v) !== null, { error: 'must be a country code like "DE" (ISO 3166-1 alpha-2, upper case)' })
    .meta({ enum: COUNTRIES, description: "The page's locale and time zone as a visitor in this country has them (locale and timezone win)." })
    .optional(),
  geo: oneOf(["auto"])
    .meta({
      description:
        'With proxy: the locale and time zone follow the proxy\'s exit country where it can be known (country, else the country its credentials name); the answer says which (X-Geo-Country, "geo").',
    })
    .optional(),
  geolocation: z
    .strictObject(
      { latitude: number(-90, 90), longitude: number(-180, 180), accuracy: number(0, 100_000).optional() },
      {
        error: "must be {latitude, longitude, accuracy?}",
      },
    )
    .optional(),
  userAgent: z
    .string({ error: "must be a string" })
    .min(1, { error: "must not be empty" })
    .max(512, { error: "must be at most 512 characters" })
    .regex(/^[\x20-\x7e]+$/, { error: "must be printable ASCII" })
    .optional(),
  mediaType: oneOf(["screen", "print"]).optional(),
  pdf: pdfOptions.optional(),
  reducedMotion: boolean().default(false),
  omitBackground: boolean().default(false),
  headers: headers.default({}),
  cookies: z
    .array(cookie, { error: "must be a list of cookies" })
    .max(MAX_COOKIES, { error: `must hold at most ${MAX_COOKIES} cookies` })
    .default([]),
  httpAuth: z
    .strictObject(
      {
        username: z
          .string()
          .max(256)
          .regex(/^[^:]*$/, { error: 'must not contain ":"' }),
        password: z.string().max(256),
      },
      { error: "must be {username, password}" },
    )
    .optional(),
  blockRequests: z
    .array(z.string().min(1, { error: "must be non-empty URL patterns" }).max(2048, { error: "must be at most 2048 characters each" }), {
      error: "must be a list of URL patterns",
    })
    .max(MAX_SELECTORS, { error: `must hold at most ${MAX_SELECTORS} patterns` })
    .default([]),
  blockResources: z
    .array(oneOf(["image", "media", "font", "stylesheet", "script", "xhr", "fetch", "websocket", "eventsource", "manifest", "other"]))
    .max(11)
    .default([]),
  blockAds: boolean().default(false),
  blockTrackers: boolean().default(false),
  // The customer's own proxy (docs/api.md, "Proxy"): every request of the page goes through it.
  proxy: z
    .string({ error: "must be a string" })
    .max(2048, { error: "must be at most 2048 characters" })
    .superRefine((value, ctx) => {
      const proxy = parseProxy(value);
      if (typeof proxy === "string") return ctx.addIssue({ code: "custom", message: proxy });
      const refused = config.privateHosts.allowed.has(targetKey(proxy.hostname, proxy.port)) ? null : literalRefusal(proxy);
      if (refused) ctx.addIssue({ code: "custom", message: `is refused: ${refused} (a proxy must be on a public address)` });
    })
    .meta({
      pattern: PROXY_URL.source,
      description: 'The proxy the page is seen through: "http://user:pass@host:port", https:// or socks5:// (on a public address).',
    })
    .optional(),
  // What the page did (docs/api.md, "What the page did"): kept as outputs are, linked from the answer.
  capture: z
    .strictObject(
      {
        har: boolean().default(false).meta({ description: "A HAR 1.2 file of the page's requests." }),
        harBodies: boolean().default(false).meta({ description: "Response bodies in the HAR (each up to 1 MB, 10 MB in all); needs har." }),
        console: boolean().default(false).meta({ description: "The console messages and uncaught errors, in order." }),
        network: boolean().default(false).meta({ description: "The requests that failed, were blocked, answered >= 400 or were still loading." }),
      },
      { error: "must be {har?, harBodies?, console?, network?}" },
    )
    .superRefine((capture, ctx) => {
      if (capture.harBodies && !capture.har) ctx.addIssue({ code: "custom", path: ["harBodies"], message: "needs har: true" });
    })
    .meta({ dependentRequired: { harBodies: ["har"] } })
    .optional(),
  responseFormat: oneOf(["binary", "json"]).default("binary"),
  // The render cache (docs/api.md, "Render cache"): seconds an output is kept for the same request.
  cacheTtl: integer(0, MAX_CACHE_TTL_SECONDS).default(0),
  cacheKey: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).max(256, { error: "must be at most 256 characters" }).optional(),
};

/** Fields of a render request that say how the answer is delivered, not what is rendered. */
const DELIVERY_FIELDS = ["responseFormat", "cacheTtl", "cacheKey"] as const;
type DeliveryFields = (typeof DELIVERY_FIELDS)[number];

/**
 * Page controls: how a page is loaded and settled, whatever is made of it (a capture, or its
 * content); the rest of a render's fields say what its image is.
 */
const PAGE_CONTROLS = [
  "headers",
  "cookies",
  "httpAuth",
  "userAgent",
  "locale",
  "timezone",
  "country",
  "geo",
  "geolocation",
  "waitForSelector",
  "waitUntil",
  "delay",
  "click",
  "js",
  "css",
  "hideSelectors",
  "removeSelectors",
  "blockCookieBanners",
  "blockAds",
  "blockTrackers",
  "blockRequests",
  "blockResources",
  "capture",
  "proxy",
] as const satisfies readonly (keyof typeof renderFields)[];
type PageControl = (typeof PAGE_CONTROLS)[number];
type ImageField = Exclude<keyof typeof renderFields, PageControl | DeliveryFields>;

const fieldsOf = <K extends keyof typeof renderFields>(keep: (field: keyof typeof renderFields) => boolean) =>
  Object.fromEntries(Object.entries(renderFields).filter(([field]) => keep(field as keyof typeof renderFields))) as Pick<typeof renderFields, K>;
export const pageControlFields = fieldsOf<PageControl>((field) => (PAGE_CONTROLS as readonly string[]).includes(field));
const imageFields = fieldsOf<ImageField>(
  (field) => !(PAGE_CONTROLS as readonly string[]).includes(field) && !(DELIVERY_FIELDS as readonly string[]).includes(field),
);

type RenderFieldsIn = Pick<
  CaptureOptions,
  | "format"
  | "style"
  | "frame"
  | "width"
  | "height"
  | "deviceScaleFactor"
  | "device"
  | "selector"
  | "clip"
  | "fullPage"
  | "omitBackground"
  | "imageWidth"
  | "imageHeight"
  | "fit"
  | "pdf"
  | "geo"
  | "proxy"
>;

// Refused before anybody pays: a mockup as PDF (a mockup is an image), and a viewport whose
// capture alone would pass the output cap (lib/render/limits.ts); a full page is cut to fit it later.
export const renderRules = (body: RenderFieldsIn, ctx: z.RefinementCtx) => {
  geoRule(body, ctx);
  if (body.style === "mockup" && body.format === "pdf") {
    ctx.addIssue({ code: "custom", path: ["format"], message: 'must be an image format ("png", "jpeg", "webp" or "avif") when style is "mockup"' });
  }
  // Part of the page: one element or one rectangle, as an image, not framed.
  const part = body.selector !== undefined ? "selector" : body.clip !== undefined ? "clip" : null;
  if (body.selector !== undefined && body.clip !== undefined) ctx.addIssue({ code: "custom", path: ["clip"], message: "cannot be combined with selector" });
  if (part && body.fullPage) ctx.addIssue({ code: "custom", path: ["fullPage"], message: `cannot be combined with ${part}` });
  if (part && body.style === "mockup") ctx.addIssue({ code: "custom", path: ["style"], message: `cannot be combined with ${part}` });
  if (part && body.format === "pdf")
    ctx.addIssue({ code: "custom", path: ["format"], message: `must be an image format ("png", "jpeg", "webp" or "avif") with ${part}` });
  if (body.omitBackground && (body.format === "jpeg" || body.format === "pdf"))
    ctx.addIssue({ code: "custom", path: ["omitBackground"], message: 'needs format "png", "webp" or "avif" (JPEG and PDF have no transparency)' });
  const thumbnail = body.imageWidth !== undefined ? "imageWidth" : body.imageHeight !== undefined ? "imageHeight" : null;
  if (thumbnail && body.format === "pdf")
    ctx.addIssue({ code: "custom", path: ["format"], message: `must be an image format ("png", "jpeg", "webp" or "avif") with ${thumbnail}` });
  if (body.fit !== undefined && !thumbnail) ctx.addIssue({ code: "custom", path: ["fit"], message: "needs imageWidth or imageHeight" });
  if (body.pdf !== undefined && body.format !== "pdf") ctx.addIssue({ code: "custom", path: ["pdf"], message: 'needs format "pdf"' });
  // Without paper the PDF is the capture on one page: the paged options have nothing to act on.
  for (const field of ["landscape", "margin", "scale", "pageRanges"] as const) {
    if (body.pdf && body.pdf.paper === undefined && body.pdf[field] !== undefined) {
      ctx.addIssue({ code: "custom", path: ["pdf", field], message: "needs pdf.paper (without it the PDF is one page sized to the capture)" });
    }
  }
  // Only for a viewport its own fields allow: an out-of-range width already says what is wrong.
  const sizeFieldsValid = (["width", "height", "deviceScaleFactor"] as const).every((field) => renderFields[field].safeParse(body[field]).success);
  const viewport = viewportFor(body);
  const pixels = outputPixels(viewport, viewport.height, body.style === "mockup");
  if (sizeFieldsValid && pixels > MAX_OUTPUT_PIXELS) {
    const cap = `${MAX_OUTPUT_PIXELS / 1e6} Mpx${body.style === "mockup" ? " (a mockup counts twice)" : ""}`;
    ctx.addIssue({
      code: "custom",
      path: ["height"],
      message: `with this width and deviceScaleFactor the capture would be ${Math.round(pixels / 1e6)} Mpx; at most ${cap}`,
    });
  }
};

/** `geo: "auto"` follows a proxy's exit: without one there is nothing to follow (send `country`). */
const geoRule = (body: Pick<CaptureOptions, "geo" | "proxy">, ctx: z.RefinementCtx) => {
  if (body.geo !== undefined && body.proxy === undefined)
    ctx.addIssue({ code: "custom", path: ["geo"], message: "needs proxy (it follows the proxy's exit country; without a proxy, send country)" });
};
/** geoRule as JSON Schema. */
const GEO_RULE_SCHEMA = { dependentRequired: { geo: ["proxy"] } };

/** A log describes one page load: an answer that carries one is not kept for the next request. */
const cacheRule = (body: { cacheTtl: number; capture?: unknown }, ctx: z.RefinementCtx) => {
  if (body.cacheTtl > 0 && body.capture !== undefined)
    ctx.addIssue({ code: "custom", path: ["cacheTtl"], message: "cannot be combined with capture (its logs describe one page load)" });
};

/** A cookie goes to the target or a domain above it, never to a third party's. */
export const cookieRule = (body: { url: string; cookies: readonly { domain?: string | undefined }[] }, ctx: z.RefinementCtx) => {
  const host = URL.canParse(body.url) ? new URL(body.url).hostname.toLowerCase() : "";
  body.cookies.forEach((c, i) => {
    const domain = c.domain?.replace(/^\./, "").toLowerCase();
    if (domain !== undefined && host !== domain && !host.endsWith(`.${domain}`)) {
      ctx.addIssue({ code: "custom", path: ["cookies", i, "domain"], message: `must be the URL's host (${host}) or a domain above it` });
    }
  });
};

/** A permission is granted to an origin, and credentials go to one: an HTML document has none. */
const documentRule = (body: Pick<CaptureOptions, "geolocation" | "headers" | "cookies" | "httpAuth">, ctx: z.RefinementCtx) => {
  if (body.geolocation) ctx.addIssue({ code: "custom", path: ["geolocation"], message: "needs a URL (an HTML document has no origin to grant it to)" });
  for (const field of ["headers", "cookies", "httpAuth"] as const) {
    const set = body[field];
    if (set && (Array.isArray(set) ? set.length : Object.keys(set).length)) {
      ctx.addIssue({ code: "custom", path: [field], message: "needs a URL (an HTML document has no origin to send it to)" });
    }
  }
};

// The rules across fields above, as JSON Schema states them (OpenAPI, MCP, x402 discovery), so a
// client that writes requests from the published schema writes valid ones. Two cannot be stated:
// the output-pixel cap (a product of fields) and a cookie's domain against the URL's host; the
// descriptions say them (CROSS_FIELD_PROSE).
// biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, in a document that is never awaited.
const implies = (condition: object, consequence: object) => ({ if: condition, then: consequence });
const present = (...fields: string[]) => ({ anyOf: fields.map((field) => ({ required: [field] })) });
const equals = (field: string, value: unknown) => ({ required: [field], properties: { [field]: { const: value } } });
const IMAGE_FORMAT = { enum: ["png", "jpeg", "webp", "avif"] };
export const RENDER_RULES_SCHEMA = [
  implies(equals("style", "mockup"), { properties: { format: IMAGE_FORMAT } }),
  { not: { required: ["selector", "clip"] } },
  implies(present("selector", "clip"), { properties: { fullPage: { const: false }, style: { not: { const: "mockup" } }, format: IMAGE_FORMAT } }),
  implies(equals("omitBackground", true), { properties: { format: { enum: ["png", "webp", "avif"] } } }),
  implies(present("imageWidth", "imageHeight"), { properties: { format: IMAGE_FORMAT } }),
  implies({ required: ["fit"] }, present("imageWidth", "imageHeight")),
  implies({ required: ["pdf"] }, equals("format", "pdf")),
  GEO_RULE_SCHEMA,
];
/** cacheRule as JSON Schema. */
const CACHE_RULE_SCHEMA = implies({ required: ["capture"] }, { properties: { cacheTtl: { const: 0 } } });
export const PIXEL_CAP_PROSE = `Also: width x deviceScaleFactor x height x deviceScaleFactor at most ${MAX_OUTPUT_PIXELS / 1e6} Mpx (a mockup counts twice; without height, 10/16 of the width).`;
export const COOKIE_PROSE = "A cookie's domain must be the URL's host or a domain above it.";
/** An HTML document has no origin: what needs one is absent or empty. */
const DOCUMENT_RULE_SCHEMA = { not: present("geolocation", "httpAuth"), properties: { headers: { maxProperties: 0 }, cookies: { maxItems: 0 } } };

/** An HTML document sent to be rendered or read, at most MAX_HTML_BYTES. */
const htmlDocument = () =>
  z
    .string({ error: "must be a string holding an HTML document" })
    .min(1, { error: "must not be empty" })
    .refine((v) => Buffer.byteLength(v, "utf8") <= MAX_HTML_BYTES, {
      error: `must be at most ${MAX_HTML_BYTES / 1024} KB (${MAX_HTML_BYTES} bytes as UTF-8)`,
    })
    .meta(utf8Bytes(MAX_HTML_BYTES));

const screenshotFields = z.strictObject({ url: httpUrl, ...renderFields });

/** Body of POST /api/v1/screenshot. */
export const screenshotRequest = screenshotFields
  .superRefine(renderRules)
  .superRefine(cookieRule)
  .superRefine(cacheRule)
  .meta({ allOf: [...RENDER_RULES_SCHEMA, CACHE_RULE_SCHEMA], description: `${PIXEL_CAP_PROSE} ${COOKIE_PROSE}` });
type ScreenshotRequest = z.output<typeof screenshotRequest>;

const htmlScreenshotFields = z.strictObject({
  html: htmlDocument(),
  ...renderFields,
});

/** Body of POST /api/v1/html-to-screenshot: every screenshot field except `url`, plus `html`. */
export const htmlScreenshotRequest = htmlScreenshotFields
  .superRefine(renderRules)
  .superRefine(documentRule)
  .superRefine(cacheRule)
  .meta({ allOf: [...RENDER_RULES_SCHEMA, DOCUMENT_RULE_SCHEMA, CACHE_RULE_SCHEMA], description: PIXEL_CAP_PROSE });
type HtmlScreenshotRequest = z.output<typeof htmlScreenshotRequest>;

// Render owns its options (lib/render/options.ts); the schemas must produce exactly what it takes.
// A field added to one and not the other fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemasMatchRender: Same<Omit<ScreenshotRequest, "url" | DeliveryFields>, CaptureOptions> &
  Same<Omit<HtmlScreenshotRequest, "html" | DeliveryFields>, CaptureOptions> = true;
void schemasMatchRender;

/** Body of POST /api/v1/metadata. */
export const metadataRequest = z.strictObject({ url: httpUrl });

/**
 * Where webhooks go: a URL with no user-info. A webhook is proved ours by its signature, and a
 * receiver's password would be a secret kept in the clear for as long as its job or monitor.
 */
export const webhookUrl = httpUrl.refine((value) => !hasCredentials(value), {
  error: "must not hold a username or password (a webhook is proved ours by its signature, made with the account's webhook secret)",
});

/** Globs on a whole URL (docs/crawl.md, "Scope"): `*` within a path segment, `**` across. */
const urlGlobs = z
  .array(
    z
      .string()
      .min(1, { error: "a glob is not empty" })
      .max(MAX_URL_CHARS, { error: `a glob is at most ${MAX_URL_CHARS} characters` }),
    {
      error: "must be a list of globs on the whole URL",
    },
  )
  .max(50, { error: "at most 50 globs" })
  .default([]);

/** What a crawl and a map keep to: the start's site, its subdomains when asked, the include and exclude globs. */
const scopeFields = {
  include: urlGlobs.meta({ description: "Only URLs matching one of these globs (`*` within a path segment, `**` across), when any are given." }),
  exclude: urlGlobs.meta({ description: "No URL matching one of these globs; exclude wins over include." }),
  subdomains: boolean().default(false).meta({ description: "Hosts under the start's host too (www. is the same host either way)." }),
};

/** What a crawl keeps of each page (docs/crawl.md, "Crawl"). */
export const CRAWL_FORMATS = ["markdown", "text", "html", "links", "metadata"] as const;

/**
 * The page controls a crawl takes: a content request's, but its logs (one file a page), its
 * User-Agent (the crawler says who it is: robots.txt speaks to it by name), and a proxy (the
 * crawler reads robots.txt, sitemaps and pages from the service's own address: docs/crawl.md).
 */
const { capture: _capture, userAgent: _userAgent, proxy: _proxy, geo: _geo, ...crawlControls } = pageControlFields;

/** Body of POST /api/v1/crawl (docs/crawl.md, "Crawl"). */
export const crawlRequest = z
  .strictObject({
    url: httpUrl,
    limit: integer(1, 10_000).default(100).meta({ description: "Pages delivered at most; their price is held until the crawl ends." }),
    depth: integer(0, 50).default(5).meta({ description: "Link hops from the start page (a sitemap's pages are one hop)." }),
    source: z
      .enum(["all", "sitemaps", "links"], { error: 'must be one of "all", "sitemaps", "links"' })
      .default("all")
      .meta({ description: "Where pages are found: sitemaps and links, sitemaps alone (no links followed), or links alone." }),
    ...scopeFields,
    render: z
      .enum(["auto", "always", "never"], { error: 'must be one of "auto", "always", "never"' })
      .default("auto")
      .meta({ description: "auto: the static HTML, a browser for pages whose scripts or styles it cannot prove; always; never." }),
    formats: z
      .array(z.enum(CRAWL_FORMATS, { error: `must be one of ${CRAWL_FORMATS.map((f) => JSON.stringify(f)).join(", ")}` }), {
        error: "must be a list of formats",
      })
      .min(1, { error: "must name at least one format" })
      .max(CRAWL_FORMATS.length)
      .refine((formats) => new Set(formats).size === formats.length, { error: "names a format twice" })
      .default(["markdown"]),
    scope: z.enum(["main", "page"], { error: 'must be "main" (the main content) or "page" (the whole body)' }).default("main"),
    modifiedSince: z
      .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: "must be an ISO 8601 date or date-time" })
      .optional()
      .meta({ description: "Pages a sitemap says are older are skipped (unchanged); each page is asked with If-Modified-Since, and a 304 is skipped too." }),
    maxAge: integer(0, 604_800).optional().meta({
      description:
        "Seconds: a page this account's crawls with maxAge delivered within them, read the same way (no headers, cookies or httpAuth), is delivered from that copy without asking the site ($0.001); the pages this crawl reads are kept as copies. 0 or absent: every page is read now, no copy kept.",
    }),
    webhookUrl: webhookUrl.optional().meta({
      description: "Where crawl.completed is POSTed (signed with the account's webhook secret) once the crawl has ended and its result can be downloaded.",
    }),
    ...crawlControls,
  })
  .superRefine((body, ctx) => {
    cookieRule(body, ctx);
    if (body.render === "never")
      for (const field of browserControls(crawlPageOptions(body)))
        ctx.addIssue({ code: "custom", path: [field], message: 'acts only in a browser: render "auto" or "always" (never reads the static HTML)' });
  });

/** Body of POST /api/v1/map (docs/crawl.md, "Map"). */
export const mapRequest = z.strictObject({
  url: httpUrl,
  limit: integer(1, 5_000).default(1_000).meta({ description: "URLs listed at most." }),
  ...scopeFields,
});

/** A CSS selector the content extraction can run (css-select's dialect). */
const scrapeSelector = () =>
  cssSelector().refine(
    (selector) => {
      try {
        compile(selector);
        return true;
      } catch {
        return false;
      }
    },
    { error: "is not a CSS selector this service can read" },
  );

/** A content snapshot's screenshot (docs/api.md, "Content"): a render's image fields; the page controls are the request's own. */
const snapshotRequest = z
  .strictObject(imageFields, {
    error: "must be true or an object of screenshot fields (format, width, fullPage, style...; the page controls go at the top level)",
  })
  .superRefine(renderRules)
  .meta({ allOf: RENDER_RULES_SCHEMA, description: PIXEL_CAP_PROSE });

/** The screenshot fields a snapshot takes by default (`screenshot: true`). */
export const SNAPSHOT_DEFAULTS = snapshotRequest.parse({});

const contentFields = z.strictObject({
  url: httpUrl.optional(),
  html: htmlDocument().optional(),
  format: z.enum(["markdown", "text", "html"], { error: 'must be one of "markdown", "text", "html"' }).default("markdown"),
  scope: z.enum(["main", "page"], { error: 'must be "main" (the main content, as a reader view) or "page" (the whole body)' }).default("main"),
  render: z.enum(["auto", "always", "never"], { error: 'must be one of "auto", "always", "never"' }).default("auto"),
  links: boolean().default(false),
  extract: z
    .record(
      z.string().regex(/^[A-Za-z_][\w-]{0,63}$/, { error: "a field's name is a letter or _, then up to 63 letters, digits, _ or -" }),
      z.union([
        scrapeSelector(),
        z.strictObject({
          selector: scrapeSelector(),
          attribute: z
            .string()
            .regex(/^[A-Za-z_:][\w:.-]{0,63}$/, { error: "must be an attribute name" })
            .optional(),
          all: boolean().optional(),
        }),
      ]),
    )
    .refine((fields) => Object.keys(fields).length >= 1 && Object.keys(fields).length <= 20, { error: "must name 1 to 20 fields" })
    .meta({ minProperties: 1, maxProperties: 20 })
    .optional(),
  screenshot: z.union([boolean(), snapshotRequest], { error: "must be true or an object of screenshot fields" }).default(false),
  ...pageControlFields,
});
type ContentFields = z.output<typeof contentFields>;

/** A request that takes a page or a document: exactly one, and what each allows. */
const sourceRule = (
  body: Pick<CaptureOptions, "geolocation" | "headers" | "cookies" | "httpAuth"> & { url?: string | undefined; html?: string | undefined },
  ctx: z.RefinementCtx,
) => {
  if ((body.url === undefined) === (body.html === undefined))
    ctx.addIssue({ code: "custom", path: body.url === undefined ? ["url"] : ["html"], message: "give exactly one of url (a page) and html (a document)" });
  if (body.url !== undefined) cookieRule({ url: body.url, cookies: body.cookies }, ctx);
  if (body.html !== undefined) documentRule(body, ctx);
};
/** sourceRule as JSON Schema. */
const SOURCE_RULE_SCHEMA = [{ oneOf: [{ required: ["url"] }, { required: ["html"] }] }, implies({ required: ["html"] }, DOCUMENT_RULE_SCHEMA)];

const contentRules = (body: ContentFields, ctx: z.RefinementCtx) => {
  sourceRule(body, ctx);
  geoRule(body, ctx);
  if (body.render === "never") {
    if (body.screenshot !== false) ctx.addIssue({ code: "custom", path: ["screenshot"], message: 'needs the browser: render "auto" or "always"' });
    for (const field of browserControls(contentPageOptions(body)))
      ctx.addIssue({ code: "custom", path: [field], message: 'acts only in a browser: render "auto" or "always" (never reads the static HTML)' });
  }
};

/** contentRules as JSON Schema. */
const CONTENT_RULES_SCHEMA = {
  allOf: [
    ...SOURCE_RULE_SCHEMA,
    GEO_RULE_SCHEMA,
    implies(equals("render", "never"), {
      properties: {
        screenshot: { const: false },
        delay: { const: 0 },
        waitUntil: { const: "load" },
        hideSelectors: { maxItems: 0 },
        removeSelectors: { maxItems: 0 },
        blockCookieBanners: { const: false },
      },
      not: present("timezone", "geolocation", "waitForSelector", "click", "js", "css", "capture", "proxy"),
    }),
  ],
  description: COOKIE_PROSE,
};

/** Body of POST /api/v1/content (docs/api.md, "Content"): a page (`url`) or a document (`html`), what to give of it, and how to load it. */
export const contentRequest = contentFields.superRefine(contentRules).meta(CONTENT_RULES_SCHEMA);

/** What the MCP tools read_page and scrape take: the content request without a snapshot (the screenshot tool captures). */
export const contentToolRequest = contentFields
  .omit({ screenshot: true })
  .superRefine((body, ctx) => contentRules({ ...body, screenshot: false }, ctx))
  .meta(CONTENT_RULES_SCHEMA);

/** The render options of a content request: its page controls, and for a snapshot its screenshot's fields. */
export function contentPageOptions(body: Omit<ContentFields, "screenshot"> & { screenshot?: ContentFields["screenshot"] }): CaptureOptions {
  const { url: _u, html: _h, format: _f, scope: _s, render: _r, links: _l, extract: _e, screenshot, ...controls } = body;
  return { ...SNAPSHOT_DEFAULTS, ...(typeof screenshot === "object" ? screenshot : {}), ...controls };
}

/** The render options of a crawl's pages: its page controls over a snapshot's defaults (no snapshot is taken). */
export function crawlPageOptions(body: z.output<typeof crawlRequest>): CaptureOptions {
  const {
    url: _u,
    limit: _l,
    depth: _d,
    source: _s,
    include: _i,
    exclude: _e,
    subdomains: _sd,
    render: _r,
    formats: _f,
    scope: _sc,
    modifiedSince: _m,
    maxAge: _a,
    webhookUrl: _w,
    ...controls
  } = body;
  return { ...SNAPSHOT_DEFAULTS, ...controls };
}

/** Frames per second an animation takes by default: a video's, and an animated image's (each frame costs far more there). */
const DEFAULT_FPS = { mp4: 30, webm: 30, gif: 12, webp: 12 } as const;

/** How an animation scrolls (docs/api.md, "Animate"). */
const scrollFields = z
  .strictObject(
    {
      to: z
        .union([integer(0, 100_000), cssSelector()], { error: 'must be "bottom", a CSS selector or a length in CSS px from 0 to 100000' })
        .default("bottom")
        .meta({ description: '"bottom" (the furthest the page scrolls), a CSS selector (its element\'s top), or CSS px from the top.' }),
      easing: oneOf(["linear", "ease-in", "ease-out", "ease-in-out"]).default("ease-in-out"),
      holdStart: integer(0, 30_000).default(0).meta({ description: "ms at the top before scrolling, inside duration." }),
      holdEnd: integer(0, 30_000).default(0).meta({ description: "ms at the target after scrolling, inside duration." }),
      back: boolean().default(false).meta({ description: "Scroll back to the top after the hold at the target." }),
    },
    { error: "must be {to?, easing?, holdStart?, holdEnd?, back?}" },
  )
  .prefault({});

const animateFields = z.strictObject({
  url: httpUrl.optional(),
  html: htmlDocument().optional(),
  format: oneOf(["mp4", "webm", "gif", "webp"]).default("mp4"),
  duration: number(1, 30).default(5).meta({ description: "Seconds." }),
  fps: integer(1, 60)
    .optional()
    .meta({ description: `Frames per second; by default ${DEFAULT_FPS.mp4} for mp4 and webm, ${DEFAULT_FPS.gif} for gif and webp.` }),
  mode: oneOf(["synthetic", "live"]).default("synthetic"),
  scroll: scrollFields,
  width: renderFields.width,
  height: renderFields.height,
  deviceScaleFactor: number(1, 3).default(1),
  device: renderFields.device,
  darkMode: renderFields.darkMode,
  reducedMotion: renderFields.reducedMotion,
  ...pageControlFields,
});
type AnimateFields = z.output<typeof animateFields>;

/** An animation's rules, answered at once or as a job's item. */
const animateRules = (where: "now" | "job") => (body: AnimateFields, ctx: z.RefinementCtx) => {
  sourceRule(body, ctx);
  geoRule(body, ctx);
  if (body.scroll.holdStart + body.scroll.holdEnd >= body.duration * 1000)
    ctx.addIssue({
      code: "custom",
      path: ["scroll", "holdEnd"],
      message: `with holdStart, must leave time to scroll: together under duration (${body.duration * 1000} ms)`,
    });
  if (where === "now" && body.mode === "live")
    ctx.addIssue({
      code: "custom",
      path: ["mode"],
      message: '"live" runs only in a job (POST /api/v1/jobs, endpoint "animate"): a capture per frame takes its time',
    });
  const refusal = animationRefusal({ ...body, fps: body.fps ?? DEFAULT_FPS[body.format] }, viewportFor({ ...body, frame: "none" }), where);
  if (refusal) ctx.addIssue({ code: "custom", path: [], message: refusal });
};
const ANIMATE_PROSE = `${COOKIE_PROSE} scroll.holdStart + scroll.holdEnd must be under duration. Frames x their size are bounded (docs/api.md, "Animate"), at most 3840x2160 device px each.`;

/** Body of POST /api/v1/animate (docs/api.md, "Animate"): a page or a document as a scrolling video, GIF or animated WebP. */
export const animateRequest = animateFields
  .extend({ responseFormat: renderFields.responseFormat })
  .superRefine(animateRules("now"))
  .meta({ allOf: [...SOURCE_RULE_SCHEMA, GEO_RULE_SCHEMA, { properties: { mode: { const: "synthetic" } } }], description: ANIMATE_PROSE });

/** What a request that takes a page or a document (sourceRule) renders. */
export const sourceOf = (body: { url?: string | undefined; html?: string | undefined }): RenderSource =>
  body.url !== undefined ? { kind: "url", url: body.url } : { kind: "html", html: body.html! };

/** The options of an animation: what it is, and how its page loads. */
export function animationOf(body: AnimateFields): { options: CaptureOptions; animation: AnimationOptions } {
  const { url: _u, html: _h, format, duration, fps, mode, scroll, ...controls } = body;
  return {
    // A screenshot's image fields by default: the page settles as a full page (lib/render/animate), the frames are the animation's own.
    options: { ...SNAPSHOT_DEFAULTS, ...controls },
    animation: { format, duration, fps: fps ?? DEFAULT_FPS[format], mode, scroll },
  };
}
/** Most items in a job, and the longest page-load limit an item may ask (docs/api.md, "Jobs"). */
const MAX_JOB_ITEMS = 100;
const MAX_JOB_TIMEOUT_SECONDS = 90;

/**
 * What a job item takes besides its endpoint's body: its page-load limit in seconds (the
 * synchronous endpoints keep theirs), and where to PUT its output besides (a presigned URL of the
 * customer's bucket, with the headers it was signed for).
 */
const jobItemFields = {
  timeout: integer(1, MAX_JOB_TIMEOUT_SECONDS).default(30),
  upload: z.strictObject({ url: httpUrl, headers: headers.optional() }, { error: "must be {url, headers?}: a presigned PUT URL" }).optional(),
};
/** A job's results are JSON with links, and its items are not cached: these fields have nothing to do in one. */
const NOT_IN_JOBS = { responseFormat: true, cacheTtl: true, cacheKey: true } as const;

const screenshotItem = screenshotFields
  .omit(NOT_IN_JOBS)
  .extend(jobItemFields)
  .superRefine(renderRules)
  .superRefine(cookieRule)
  .meta({ allOf: RENDER_RULES_SCHEMA, description: `${PIXEL_CAP_PROSE} ${COOKIE_PROSE}` });
const htmlScreenshotItem = htmlScreenshotFields
  .omit(NOT_IN_JOBS)
  .extend(jobItemFields)
  .superRefine(renderRules)
  .superRefine(documentRule)
  .meta({ allOf: [...RENDER_RULES_SCHEMA, DOCUMENT_RULE_SCHEMA], description: PIXEL_CAP_PROSE });
const contentItem = contentFields.extend(jobItemFields).superRefine(contentRules).meta(CONTENT_RULES_SCHEMA);
const animateItem = animateFields
  .extend(jobItemFields)
  .superRefine(animateRules("job"))
  .meta({ allOf: [...SOURCE_RULE_SCHEMA, GEO_RULE_SCHEMA], description: ANIMATE_PROSE });

const itemsOf = <T extends z.ZodType>(item: T) =>
  z
    .array(item, { error: "must be a list of request bodies" })
    .min(1, { error: `must hold 1 to ${MAX_JOB_ITEMS} items` })
    .max(MAX_JOB_ITEMS, { error: `must hold 1 to ${MAX_JOB_ITEMS} items` });

/** Where a job's webhooks go (docs/api.md, "Jobs"): its end, and with `webhookEvents: ["item"]` each item's. */
const jobWebhook = {
  webhookUrl: webhookUrl.optional(),
  webhookEvents: z
    .array(oneOf(["item"]))
    .max(1, { error: 'must be ["item"] or left out' })
    .optional(),
};

/** Body of POST /api/v1/jobs (docs/api.md, "Jobs"): an endpoint and 1 to 100 of its request bodies. */
export const jobRequest = z.discriminatedUnion(
  "endpoint",
  [
    z.strictObject({ endpoint: z.literal("screenshot"), items: itemsOf(screenshotItem), ...jobWebhook }),
    z.strictObject({ endpoint: z.literal("html-to-screenshot"), items: itemsOf(htmlScreenshotItem), ...jobWebhook }),
    z.strictObject({ endpoint: z.literal("content"), items: itemsOf(contentItem), ...jobWebhook }),
    z.strictObject({ endpoint: z.literal("animate"), items: itemsOf(animateItem), ...jobWebhook }),
  ],
  { error: 'must be one of "screenshot", "html-to-screenshot", "content", "animate"' },
);
export type JobRequest = z.output<typeof jobRequest>;

/** Body of POST /api/v1/signup. */
export const signupRequest = z.strictObject({
  email: z
    .string({ error: "must be an email address" })
    .trim()
    .max(254, { error: "must be at most 254 characters" })
    .pipe(z.email({ error: "must be a valid email address" }))
    .refine((email) => !imitatesLatinDomain(email), {
      error:
        "its domain is written in look-alike letters of another script (Cyrillic or Greek letters among or for Latin ones); use the address as your provider spells it",
    })
    .meta({ examples: ["ada@example.com"] }),
});

/** Query of GET /api/v1/verify-email: the token of a mailed link. */
export const verifyEmailQuery = z.strictObject({
  token: z.string({ error: "is required: open the link from the mail as it is" }).regex(/^[A-Za-z0-9_-]{43}$/, {
    error: "is not one this service mails: open the link from the mail as it is",
  }),
});

/** Body of PATCH /api/v1/account. */
export const accountUpdateRequest = z.strictObject({ auto_topup_enabled: boolean() });

/** Smallest top-up a customer may buy, in cents (docs/api.md: $5). */
export const MIN_TOPUP_CENTS = 500;
/** Largest single top-up, in cents ($10,000): a typo guard, not a business limit. */
export const MAX_TOPUP_CENTS = 1_000_000;

/** Body of POST /api/v1/topup. */
export const topupRequest = z.strictObject({ amount_cents: integer(MIN_TOPUP_CENTS, MAX_TOPUP_CENTS) });

/** Body of PUT /api/v1/auto-topup (docs/api.md, "Auto-topup"). */
export const autoTopupRequest = z
  .strictObject({
    threshold_cents: integer(0, MAX_TOPUP_CENTS),
    amount_cents: integer(MIN_TOPUP_CENTS, MAX_TOPUP_CENTS),
    monthly_cap_cents: integer(MIN_TOPUP_CENTS, 100 * MAX_TOPUP_CENTS),
    payer: z
      .string({ error: "must be an address (0x and 40 hex digits)" })
      .regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be an address (0x and 40 hex digits)" }),
    permit: z
      .strictObject({
        value: z.string({ error: "must be the allowance in USDC's smallest unit, as a string of digits" }).regex(/^[1-9]\d{0,29}$/, {
          error: "must be the allowance in USDC's smallest unit, as a string of digits",
        }),
        deadline: z.number({ error: "must be the permit's deadline in unix seconds" }).int().positive(),
        signature: z.string({ error: "must be the signature, 0x and 130 hex digits" }).regex(/^0x[0-9a-fA-F]{130}$/, {
          error: "must be the signature, 0x and 130 hex digits",
        }),
      })
      .optional(),
    authorization: z
      .strictObject({
        deadline: z.number({ error: "must be the authorization's deadline in unix seconds" }).int().positive(),
        signature: z.string({ error: "must be the signature, 0x and 130 hex digits" }).regex(/^0x[0-9a-fA-F]{130}$/, {
          error: "must be the signature, 0x and 130 hex digits",
        }),
      })
      .optional(),
  })
  .refine((body) => body.monthly_cap_cents >= body.amount_cents, { path: ["monthly_cap_cents"], error: "must be at least amount_cents" })
  .refine((body) => !(body.permit && body.authorization), { path: ["authorization"], error: "send either permit or authorization, not both" });

/** Body of POST /api/v1/signing-keys (optional): the most links signed with the key may be charged a UTC day, in cents (1 cent to $10,000). */
export const signingKeyRequest = z.strictObject({ dailyLimitCents: integer(1, MAX_TOPUP_CENTS).optional() });

/** A body that says nothing: `{}` (POST /api/v1/webhook-secret). */
export const emptyRequest = z.strictObject({});

/** Body of POST /api/v1/api-keys (optional): a name to tell the key by. */
export const apiKeyRequest = z.strictObject({
  name: z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" }).max(64, { error: "must be at most 64 characters" }).optional(),
});
