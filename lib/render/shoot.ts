import type { Page } from "puppeteer-core";
import { chromiumFormat, finishEncoding } from "./encode.js";
import { translateRenderError } from "./errors.js";
import { imageSize } from "./image-size.js";
import { composeMockup } from "./mockup.js";
import type { CaptureOptions, Clip, OutputFormat } from "./options.js";
import { captureTiles, needsTiles } from "./tiles.js";
import type { Viewport } from "./viewport.js";

// Capture and encode: the settled page as PNG, JPEG, WebP, AVIF or a one-page PDF, framed as a mockup if asked;
// areas past Chromium's one-piece limit in tiles (lib/render/tiles.ts).

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  avif: "image/avif",
  pdf: "application/pdf",
};

/** The encoded output and its size: pixels for images, CSS pixels of the page for PDF. */
export interface Shot {
  readonly body: Buffer;
  readonly width: number;
  readonly height: number;
}

/** Captures `area` of the page (CSS px of the document: the viewport, the full page, an element or a clip) at `viewport` in the requested form. */
export async function shoot(page: Page, viewport: Viewport, area: Clip, options: CaptureOptions, host: string | null): Promise<Shot> {
  const { height } = area;
  try {
    if (options.format === "pdf") {
      const pdf = await page.pdf({
        width: `${viewport.width}px`,
        height: `${height}px`,
        printBackground: true,
        pageRanges: "1",
        margin: { top: 0, right: 0, bottom: 0, left: 0 },
      });
      return { body: Buffer.from(pdf), width: viewport.width, height };
    }
    const mockup = options.style === "mockup";
    const part = options.fullPage || options.selector !== undefined || options.clip !== undefined;
    if (!mockup && part && needsTiles(area, viewport.deviceScaleFactor)) {
      const body = await captureTiles(page, area, viewport.deviceScaleFactor, {
        format: options.format,
        quality: options.quality,
        omitBackground: options.omitBackground,
      });
      return { body, width: Math.round(area.width * viewport.deviceScaleFactor), height: Math.round(height * viewport.deviceScaleFactor) };
    }
    // A mockup composes a lossless capture (zlib's fast setting, since it is decoded at once).
    const type = mockup ? "png" : chromiumFormat(options.format);
    const shot = Buffer.from(
      await page.screenshot({
        type,
        ...(mockup ? { optimizeForSpeed: true } : {}),
        ...(type === "jpeg" || type === "webp" ? { quality: options.quality } : {}),
        ...(part ? { clip: { ...area }, captureBeyondViewport: true } : {}),
        ...(options.omitBackground ? { omitBackground: true } : {}),
      }),
    );
    const body = mockup
      ? await composeMockup(shot, viewport.width, height, { ...options, format: options.format, deviceScaleFactor: viewport.deviceScaleFactor, host })
      : await finishEncoding(shot, options.format, options.quality);
    const size = imageSize(body) ?? { width: Math.round(area.width * viewport.deviceScaleFactor), height: Math.round(height * viewport.deviceScaleFactor) };
    return { body, ...size };
  } catch (error) {
    throw translateRenderError(error);
  }
}
