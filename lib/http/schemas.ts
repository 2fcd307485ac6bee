import { z } from "zod";

import { MAX_OUTPUT_PIXELS, outputPixels } from "../render/limits.js";
import type { CaptureOptions } from "../render/options.js";
import { viewportFor } from "../render/viewport.js";
import { MAX_URL_CHARS } from "../text.js";

// One zod schema per request body (docs/api.md), with its defaults.
// Messages say the rule; lib/http/validate.ts prefixes the field name.

const integer = (min: number, max: number) => {
  const rule = `must be an integer from ${min} to ${max}`;
  return z.number({ error: rule }).int({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
};

const number = (min: number, max: number) => {
  const rule = `must be a number from ${min} to ${max}`;
  return z.number({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
};

const boolean = () => z.boolean({ error: "must be true or false" });

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.map((v) => `"${v}"`).join(", ")}` });

const HEX_COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** Largest accepted `html` document, in UTF-8 bytes (docs/api.md: 500 KB). */
export const MAX_HTML_BYTES = 500 * 1024;

const httpUrl = z
  .string({ error: "must be a string holding an http:// or https:// URL" })
  .max(MAX_URL_CHARS, { error: `must be at most ${MAX_URL_CHARS} characters` })
  .refine(
    (value) => {
      if (!URL.canParse(value)) return false;
      const { protocol, hostname } = new URL(value);
      return (protocol === "http:" || protocol === "https:") && hostname.length > 0;
    },
    { error: "must be an absolute URL starting with http:// or https://" },
  );

// Fields shared by the URL and the HTML screenshot requests; defaults from docs/api.md.
const renderFields = {
  format: oneOf(["png", "jpeg", "pdf"]).default("png"),
  width: integer(320, 3840).optional(),
  height: integer(100, 16384).nullable().default(null),
  fullPage: boolean().default(false),
  darkMode: boolean().default(false),
  deviceScaleFactor: number(1, 3).default(2),
  quality: integer(1, 100).default(80),
  delay: integer(0, 10_000).default(0),
  style: oneOf(["mockup"]).optional(),
  background: z
    .string({ error: 'must be "gradient" or a hex colour like "#1e293b"' })
    .refine((v) => v === "gradient" || HEX_COLOUR.test(v), { error: 'must be "gradient" or a hex colour like "#1e293b"' })
    .default("gradient"),
  padding: integer(0, 512).default(64),
  borderRadius: integer(0, 256).default(12),
  shadow: boolean().default(true),
  frame: oneOf(["browser", "phone", "none"]).default("browser"),
  blockCookieBanners: boolean().default(false),
  waitForSelector: z
    .string({ error: "must be a CSS selector string" })
    .trim()
    .min(1, { error: "must be a non-empty CSS selector" })
    .max(1024, { error: "must be at most 1024 characters" })
    .optional(),
  responseFormat: oneOf(["binary", "json"]).default("binary"),
};

type RenderFieldsIn = Pick<CaptureOptions, "format" | "style" | "frame" | "width" | "height" | "deviceScaleFactor">;

// Refused before anybody pays: a mockup as PDF (a mockup is an image), and a viewport whose
// capture alone would pass the output cap (lib/render/limits.ts); a full page is cut to fit it later.
const renderRules = (body: RenderFieldsIn, ctx: z.RefinementCtx) => {
  if (body.style === "mockup" && body.format === "pdf") {
    ctx.addIssue({ code: "custom", path: ["format"], message: 'must be "png" or "jpeg" when style is "mockup"' });
  }
  const viewport = viewportFor(body);
  const pixels = outputPixels(viewport, viewport.height, body.style === "mockup");
  if (pixels > MAX_OUTPUT_PIXELS) {
    const cap = `${MAX_OUTPUT_PIXELS / 1e6} Mpx${body.style === "mockup" ? " (a mockup counts twice)" : ""}`;
    ctx.addIssue({
      code: "custom",
      path: ["height"],
      message: `with this width and deviceScaleFactor the capture would be ${Math.round(pixels / 1e6)} Mpx; at most ${cap}`,
    });
  }
};

/** Body of POST /api/v1/screenshot. */
export const screenshotRequest = z.strictObject({ url: httpUrl, ...renderFields }).superRefine(renderRules);
type ScreenshotRequest = z.output<typeof screenshotRequest>;

/** Body of POST /api/v1/html-to-screenshot: every screenshot field except `url`, plus `html`. */
export const htmlScreenshotRequest = z
  .strictObject({
    html: z
      .string({ error: "must be a string holding an HTML document" })
      .min(1, { error: "must not be empty" })
      .refine((v) => Buffer.byteLength(v, "utf8") <= MAX_HTML_BYTES, {
        error: `must be at most ${MAX_HTML_BYTES / 1024} KB (${MAX_HTML_BYTES} bytes as UTF-8)`,
      }),
    ...renderFields,
  })
  .superRefine(renderRules);
type HtmlScreenshotRequest = z.output<typeof htmlScreenshotRequest>;

// Render owns its options (lib/render/options.ts); the schemas must produce exactly what it takes.
// A field added to one and not the other fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemasMatchRender: Same<Omit<ScreenshotRequest, "url" | "responseFormat">, CaptureOptions> &
  Same<Omit<HtmlScreenshotRequest, "html" | "responseFormat">, CaptureOptions> = true;
void schemasMatchRender;

/** Body of POST /api/v1/metadata. */
export const metadataRequest = z.strictObject({ url: httpUrl });

/** Body of POST /api/v1/signup. */
export const signupRequest = z.strictObject({
  email: z
    .string({ error: "must be an email address" })
    .trim()
    .max(254, { error: "must be at most 254 characters" })
    .pipe(z.email({ error: "must be a valid email address" })),
});

/** Body of PATCH /api/v1/account. */
export const accountUpdateRequest = z.strictObject({ auto_topup_enabled: boolean() });

/** Smallest top-up a customer may buy, in cents (docs/api.md: $5). */
export const MIN_TOPUP_CENTS = 500;
/** Largest single top-up, in cents ($10,000): a typo guard, not a business limit. */
export const MAX_TOPUP_CENTS = 1_000_000;

/** Body of POST /api/v1/topup. */
export const topupRequest = z.strictObject({ amount_cents: integer(MIN_TOPUP_CENTS, MAX_TOPUP_CENTS) });
