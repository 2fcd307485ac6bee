import { describe, expect, it } from "vitest";
import {
  accountUpdateRequest,
  htmlScreenshotRequest,
  MAX_HTML_BYTES,
  metadataRequest,
  screenshotRequest,
  signupRequest,
  topupRequest,
} from "../../../lib/api/schemas.js";
import { AppError } from "../../../lib/errors.js";
import { validate } from "../../../lib/http/validate.js";

const URL_OK = "https://example.com/page?q=1";

/** The INVALID_PARAMS message for `input`, or fails the test when it validates. */
function rejection(schema: Parameters<typeof validate>[0], input: unknown): string {
  try {
    validate(schema, input);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("INVALID_PARAMS");
    expect((error as AppError).status).toBe(400);
    return (error as AppError).message;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe("screenshot request", () => {
  it("applies the documented defaults (width is left to the viewport: lib/render/viewport.ts)", () => {
    expect(validate(screenshotRequest, { url: URL_OK })).toEqual({
      url: URL_OK,
      format: "png",
      height: null,
      fullPage: false,
      darkMode: false,
      quality: 80,
      delay: 0,
      background: "gradient",
      padding: 64,
      borderRadius: 12,
      shadow: true,
      frame: "browser",
      blockCookieBanners: false,
      hideSelectors: [],
      removeSelectors: [],
      reducedMotion: false,
      omitBackground: false,
      headers: {},
      cookies: [],
      blockRequests: [],
      blockResources: [],
      blockAds: false,
      blockTrackers: false,
      responseFormat: "binary",
      cacheTtl: 0,
    });
  });

  it("keeps every valid field as given", () => {
    const body = {
      url: "http://127.0.0.1:8080/x",
      format: "jpeg",
      width: 3840,
      height: 2000,
      fullPage: true,
      darkMode: true,
      deviceScaleFactor: 1.5,
      quality: 1,
      imageWidth: 1200,
      imageHeight: 630,
      fit: "contain",
      delay: 10_000,
      style: "mockup",
      background: "#1E293B",
      padding: 0,
      borderRadius: 256,
      shadow: false,
      frame: "none",
      blockCookieBanners: true,
      waitForSelector: "#app > .ready",
      waitUntil: "networkidle",
      hideSelectors: [".chat"],
      removeSelectors: ["#promo", "aside"],
      click: "#accept",
      css: "body { color: red }",
      js: "document.title = 'x'",
      timezone: "Europe/Paris",
      locale: "fr-FR",
      geolocation: { latitude: 48.85, longitude: 2.35, accuracy: 5 },
      userAgent: "MyBot/1.0",
      mediaType: "print",
      reducedMotion: true,
      omitBackground: false,
      device: "ipad",
      headers: { "X-Preview": "1" },
      cookies: [{ name: "session", value: "abc", domain: "127.0.0.1", path: "/app", secure: true, httpOnly: true, sameSite: "Lax", expires: 2_000_000_000 }],
      httpAuth: { username: "ann", password: "s3cret" },
      blockRequests: ["*/ads/*"],
      blockResources: ["media", "font"],
      blockAds: true,
      blockTrackers: true,
      responseFormat: "json",
      cacheTtl: 2_592_000,
      cacheKey: "variant-b",
    } as const;
    expect(validate(screenshotRequest, body)).toEqual(body);
  });

  // One failing and one passing value for every rule; the message must name the field and the rule.
  const rules: [field: string, bad: unknown, good: unknown, rule: RegExp][] = [
    ["url", "example.com", "https://example.com", /url: must be an absolute URL starting with http/],
    ["url", "ftp://example.com/file", "http://example.com", /url: must be an absolute URL/],
    ["url", "file:///etc/passwd", "https://example.com/a", /url: must be an absolute URL/],
    ["url", "javascript:alert(1)", "https://example.com/b", /url: must be an absolute URL/],
    ["url", 42, "https://example.com/c", /url: must be a string/],
    ["url", `https://example.com/${"a".repeat(9000)}`, "https://example.com/d", /url: must be at most 8192 characters/],
    ["format", "gif", "jpeg", /format: must be one of "png", "jpeg", "webp", "avif", "pdf"/],
    ["width", 319, 320, /width: must be an integer from 320 to 3840/],
    ["width", 3841, 3840, /width: must be an integer from 320 to 3840/],
    ["width", 1000.5, 1000, /width: must be an integer/],
    ["width", "1280", 1280, /width: must be an integer/],
    ["height", 99, 100, /height: must be an integer from 100 to 16384/],
    ["height", 16385, null, /height: must be an integer from 100 to 16384/],
    ["fullPage", "true", true, /fullPage: must be true or false/],
    ["darkMode", 1, false, /darkMode: must be true or false/],
    ["deviceScaleFactor", 0.5, 1, /deviceScaleFactor: must be a number from 1 to 3/],
    ["deviceScaleFactor", 3.5, 3, /deviceScaleFactor: must be a number from 1 to 3/],
    ["quality", 0, 1, /quality: must be an integer from 1 to 100/],
    ["quality", 101, 100, /quality: must be an integer from 1 to 100/],
    ["imageWidth", 0, 1, /imageWidth: must be an integer from 1 to 8192/],
    ["cacheTtl", -1, 0, /cacheTtl: must be an integer from 0 to 2592000/],
    ["cacheTtl", 2_592_001, 86_400, /cacheTtl: must be an integer from 0 to 2592000/],
    ["cacheTtl", 1.5, 1, /cacheTtl: must be an integer/],
    ["cacheKey", "", "a", /cacheKey: must not be empty/],
    ["cacheKey", "k".repeat(257), "k".repeat(256), /cacheKey: must be at most 256 characters/],
    ["imageWidth", 8193, 8192, /imageWidth: must be an integer from 1 to 8192/],
    ["imageHeight", 600.5, 600, /imageHeight: must be an integer/],
    ["imageHeight", "600", 600, /imageHeight: must be an integer/],
    ["delay", -1, 0, /delay: must be an integer from 0 to 10000/],
    ["delay", 10_001, 10_000, /delay: must be an integer from 0 to 10000/],
    ["style", "fancy", "mockup", /style: must be one of "mockup"/],
    ["background", "red", "#abc", /background: must be a preset .* or a hex colour/],
    ["background", "#abcd", "#AABBCC", /background: must be a preset .* or a hex colour/],
    ["background", "#gggggg", "gradient", /background: must be a preset .* or a hex colour/],
    ["padding", -1, 0, /padding: must be an integer from 0 to 512/],
    ["padding", 513, 512, /padding: must be an integer from 0 to 512/],
    ["borderRadius", -1, 0, /borderRadius: must be an integer from 0 to 256/],
    ["borderRadius", 257, 256, /borderRadius: must be an integer from 0 to 256/],
    ["shadow", "no", false, /shadow: must be true or false/],
    ["frame", "watch", "laptop", /frame: must be one of "browser", "phone", "tablet", "laptop", "none"/],
    ["frame", "tablet ", "tablet", /frame: must be one of/],
    ["background", "Ocean", "ocean", /background: must be a preset \("gradient", "ocean", "sunset", "forest", "aurora", "midnight", "slate"\) or a hex colour/],
    ["background", "constructor", "midnight", /background: must be a preset/],
    ["blockCookieBanners", null, true, /blockCookieBanners: must be true or false/],
    ["waitForSelector", "", "#ready", /waitForSelector: must be a non-empty CSS selector/],
    ["waitForSelector", 5, ".x", /waitForSelector: must be a CSS selector string/],
    ["waitForSelector", "a".repeat(1025), "div", /waitForSelector: must be at most 1024 characters/],
    ["responseFormat", "base64", "json", /responseFormat: must be one of "binary", "json"/],
  ];

  for (const [field, bad, good, rule] of rules) {
    it(`${field}: rejects ${JSON.stringify(bad)?.slice(0, 40)}, accepts ${JSON.stringify(good)}`, () => {
      expect(rejection(screenshotRequest, { url: URL_OK, [field]: bad })).toMatch(rule);
      expect(validate(screenshotRequest, { url: URL_OK, [field]: good })).toMatchObject({ [field]: good });
    });
  }

  it("requires url", () => {
    expect(rejection(screenshotRequest, {})).toMatch(/url: is required/);
  });

  it("refuses, before anyone pays, a viewport whose capture alone passes the 100 Mpx output cap (a mockup counts twice)", () => {
    expect(rejection(screenshotRequest, { url: URL_OK, width: 3840, height: 16384, deviceScaleFactor: 3 })).toMatch(
      /height: with this width and deviceScaleFactor the capture would be 566 Mpx; at most 100 Mpx/,
    );
    expect(validate(screenshotRequest, { url: URL_OK, width: 3840, height: 2400, deviceScaleFactor: 3 }).height).toBe(2400); // 83 Mpx
    expect(rejection(screenshotRequest, { url: URL_OK, width: 3840, height: 2400, deviceScaleFactor: 3, style: "mockup" })).toMatch(/a mockup counts twice/);
    expect(rejection(htmlScreenshotRequest, { html: "<p>x</p>", width: 3840, height: 16384, deviceScaleFactor: 3 })).toMatch(/Mpx/);
  });

  it("names at most five unknown keys, each cut short, however many a body carries", () => {
    const body: Record<string, unknown> = { url: URL_OK };
    for (let i = 0; i < 100_000; i++) body[`key${i}${"x".repeat(100)}`] = 1;
    const message = rejection(screenshotRequest, body);
    expect(message.length).toBeLessThan(600);
    expect(message).toMatch(/and 99995 more/);
  });

  it("rejects unknown fields by name so typos do not pass silently", () => {
    expect(rejection(screenshotRequest, { url: URL_OK, fullpage: true })).toMatch(/unknown field "fullpage"/);
    expect(rejection(screenshotRequest, { url: URL_OK, a: 1, b: 2 })).toMatch(/unknown fields "a", "b"/);
  });

  it("rejects a PDF mockup and accepts PNG and JPEG mockups and plain PDFs", () => {
    expect(rejection(screenshotRequest, { url: URL_OK, style: "mockup", format: "pdf" })).toMatch(
      /format: must be an image format \("png", "jpeg", "webp" or "avif"\) when style is "mockup"/,
    );
    expect(validate(screenshotRequest, { url: URL_OK, style: "mockup", format: "jpeg" }).format).toBe("jpeg");
    expect(validate(screenshotRequest, { url: URL_OK, format: "pdf" }).format).toBe("pdf");
  });

  it("a thumbnail is an image: imageWidth/imageHeight with PDF, fit without a size, and an unknown fit are refused", () => {
    expect(rejection(screenshotRequest, { url: URL_OK, format: "pdf", imageWidth: 400 })).toMatch(
      /format: must be an image format \("png", "jpeg", "webp" or "avif"\) with imageWidth/,
    );
    expect(rejection(screenshotRequest, { url: URL_OK, format: "pdf", imageHeight: 400 })).toMatch(/with imageHeight/);
    expect(rejection(screenshotRequest, { url: URL_OK, fit: "inside" })).toMatch(/fit: needs imageWidth or imageHeight/);
    expect(rejection(screenshotRequest, { url: URL_OK, imageWidth: 400, fit: "fill" })).toMatch(/fit: must be one of "cover", "contain", "inside"/);
    expect(validate(htmlScreenshotRequest, { html: "<p>x</p>", imageHeight: 300, fit: "inside", style: "mockup", format: "avif" })).toMatchObject({
      imageHeight: 300,
      fit: "inside",
    });
  });

  it("pdf: paged options need paper and format pdf; each field has its rule", () => {
    const pdf = (fields: Record<string, unknown>, format = "pdf") => rejection(screenshotRequest, { url: URL_OK, format, pdf: fields });
    expect(pdf({ paper: "A4" }, "png")).toMatch(/: pdf: needs format "pdf"\.$/);
    for (const field of ["landscape", "margin", "scale", "pageRanges"]) {
      const value = { landscape: true, margin: "1cm", scale: 0.5, pageRanges: "1" }[field];
      expect(pdf({ [field]: value })).toMatch(new RegExp(`pdf\\.${field}: needs pdf\\.paper`));
    }
    expect(pdf({ paper: "a4" })).toMatch(/pdf\.paper: must be one of "A4", "A3", "A5", "Letter", "Legal", "Tabloid"/);
    expect(pdf({ paper: "A4", scale: 3 })).toMatch(/pdf\.scale: must be a number from 0.1 to 2/);
    expect(pdf({ paper: "A4", landscape: "yes" })).toMatch(/pdf\.landscape: must be true or false/);
    for (const margin of ["60mm", "3in", "calc(1px)", "10", "-1mm", "1e3px", { top: "1km" }, 5]) {
      expect(pdf({ paper: "A4", margin }), JSON.stringify(margin)).toMatch(/pdf\.margin(\.top)?: must be a length like "10mm"/);
    }
    for (const pageRanges of ["0", "1-101", "1,,2", "1-", "a", "1;2", "9".repeat(300)]) {
      expect(pdf({ paper: "A4", pageRanges }), pageRanges).toMatch(/pdf\.pageRanges: must be/);
    }
    expect(pdf({ paper: "A4", orientation: "landscape" })).toMatch(
      /pdf: must be \{paper\?, landscape\?, margin\?, scale\?, printBackground\?, pageRanges\?\}|unknown field/,
    );
    const paged = { paper: "Letter", landscape: true, margin: { top: "0.5in", left: "24px" }, scale: 0.1, printBackground: false, pageRanges: "1-5, 8, 11-13" };
    expect(validate(screenshotRequest, { url: URL_OK, format: "pdf", pdf: paged }).pdf).toEqual(paged);
    for (const margin of ["0", "50mm", "5cm", "1.9685in", "2in", "188px", "192px", "49.9999mm"])
      expect(validate(screenshotRequest, { url: URL_OK, format: "pdf", pdf: { paper: "A4", margin } }).pdf?.margin).toBe(margin);
    for (const margin of ["50.1mm", "5.01cm", "2.1in", "192.5px", "193px"]) expect(pdf({ paper: "A4", margin }), margin).toMatch(/at most 50 mm/);
    // A range written high to low is read low to high.
    expect(validate(screenshotRequest, { url: URL_OK, format: "pdf", pdf: { paper: "A4", pageRanges: "5-3,8, 12 - 11" } }).pdf?.pageRanges).toBe(
      "3-5, 8, 11-12",
    );
    // Without paper, only printBackground: the single page keeps its mode.
    expect(validate(screenshotRequest, { url: URL_OK, format: "pdf", pdf: { printBackground: false } }).pdf).toEqual({ printBackground: false });
  });

  it("accepts mockup fields without style: mockup (they are ignored)", () => {
    expect(validate(screenshotRequest, { url: URL_OK, frame: "phone", padding: 10 }).style).toBeUndefined();
  });

  it("says a broken rule once, and no consequence of it: 1e308 as width is one problem", () => {
    expect(rejection(screenshotRequest, { url: URL_OK, width: 1e308 })).toBe("Invalid request: width: must be an integer from 320 to 3840.");
    expect(rejection(screenshotRequest, { url: URL_OK, width: 5000, deviceScaleFactor: 3 })).toBe(
      "Invalid request: width: must be an integer from 320 to 3840.",
    );
    expect(rejection(screenshotRequest, { url: URL_OK, deviceScaleFactor: 30, height: 16384 })).not.toMatch(/Mpx/);
  });

  it("reports several problems at once", () => {
    const message = rejection(screenshotRequest, { url: "nope", width: 1, quality: 0, delay: -5 });
    expect(message).toMatch(/url: .*; width: .*; quality: .*\(and 1 more\)/);
  });
});

describe("HTML screenshot request", () => {
  it("accepts every screenshot field except url, with the same defaults", () => {
    const parsed = validate(htmlScreenshotRequest, { html: "<h1>Hi</h1>", format: "jpeg", width: 800 });
    expect(parsed).toMatchObject({ html: "<h1>Hi</h1>", format: "jpeg", width: 800, quality: 80, hideSelectors: [] });
    expect(parsed).not.toHaveProperty("waitUntil");
    expect(parsed.deviceScaleFactor, "the viewport's default (2, or the device's)").toBeUndefined();
    expect(rejection(htmlScreenshotRequest, { html: "<p>x</p>", url: URL_OK })).toMatch(/unknown field "url"/);
  });

  it("requires a non-empty html string", () => {
    expect(rejection(htmlScreenshotRequest, {})).toMatch(/html: is required/);
    expect(rejection(htmlScreenshotRequest, { html: "" })).toMatch(/html: must not be empty/);
    expect(rejection(htmlScreenshotRequest, { html: 7 })).toMatch(/html: must be a string/);
  });

  it("limits html to 500 KB counted as UTF-8 bytes, not characters", () => {
    expect(validate(htmlScreenshotRequest, { html: "a".repeat(MAX_HTML_BYTES) }).html).toHaveLength(MAX_HTML_BYTES);
    expect(rejection(htmlScreenshotRequest, { html: "a".repeat(MAX_HTML_BYTES + 1) })).toMatch(/html: must be at most 500 KB/);
    // "é" is two bytes: half as many characters already reach the limit.
    expect(rejection(htmlScreenshotRequest, { html: "é".repeat(MAX_HTML_BYTES / 2 + 1) })).toMatch(/html: must be at most 500 KB/);
  });

  it("rejects a PDF mockup here too", () => {
    expect(rejection(htmlScreenshotRequest, { html: "<p>x</p>", style: "mockup", format: "pdf" })).toMatch(/format: must be an image format/);
  });
});

describe("other bodies", () => {
  it("metadata needs an http(s) url and nothing else", () => {
    expect(validate(metadataRequest, { url: URL_OK })).toEqual({ url: URL_OK });
    expect(rejection(metadataRequest, { url: "mailto:a@b.c" })).toMatch(/url: must be an absolute URL/);
    expect(rejection(metadataRequest, { url: URL_OK, width: 800 })).toMatch(/unknown field "width"/);
  });

  it("signup needs a valid email", () => {
    expect(validate(signupRequest, { email: " Dev@Example.com " })).toEqual({ email: "Dev@Example.com" });
    expect(rejection(signupRequest, { email: "not-an-email" })).toMatch(/email: must be a valid email address/);
    expect(rejection(signupRequest, { email: `${"a".repeat(250)}@x.io` })).toMatch(/email: must be at most 254 characters/);
    expect(rejection(signupRequest, {})).toMatch(/email: is required/);
  });

  it("account update takes a boolean auto_topup_enabled", () => {
    expect(validate(accountUpdateRequest, { auto_topup_enabled: true })).toEqual({ auto_topup_enabled: true });
    expect(rejection(accountUpdateRequest, { auto_topup_enabled: "yes" })).toMatch(/auto_topup_enabled: must be true or false/);
  });

  it("top-up is at least $5 in whole cents", () => {
    expect(validate(topupRequest, { amount_cents: 500 })).toEqual({ amount_cents: 500 });
    expect(rejection(topupRequest, { amount_cents: 499 })).toMatch(/amount_cents: must be an integer from 500 to 1000000/);
    expect(rejection(topupRequest, { amount_cents: 500.5 })).toMatch(/amount_cents: must be an integer/);
  });

  it("a body that is not an object is refused as a whole", () => {
    expect(rejection(metadataRequest, [])).toMatch(/the body must be a JSON object/);
  });
});
