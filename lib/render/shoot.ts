import type { Page } from "puppeteer-core";
import type { Sharp } from "sharp";
import { chromiumFormat, finishImage } from "./encode.js";
import { translateRenderError } from "./errors.js";
import { imageSize } from "./image-size.js";
import { composeMockup } from "./mockup/mockup.js";
import type { CaptureOptions, Clip, OutputFormat } from "./options.js";
import { printPdf } from "./pdf.js";
import { captureTiles, needsTiles } from "./tiles.js";
import type { Viewport } from "./viewport.js";

// Capture and encode: the settled page as PNG, JPEG, WebP, AVIF or PDF (lib/render/pdf.ts), framed as a mockup if asked;
// images past Chromium's one-piece limit in tiles (lib/render/tiles.ts), mockups' too.

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  avif: "image/avif",
  pdf: "application/pdf",
};

/** The encoded output and its size: pixels for images, CSS pixels of a page for PDF (and its pages). */
export interface Shot {
  readonly body: Buffer;
  readonly width: number;
  readonly height: number;
  readonly pages?: number;
  /** A paged PDF was cut at its page cap. */
  readonly truncated?: boolean;
}

/** Where the page is scrolled to, CSS px, as the browser lays it out (a page's script cannot fake it). */
async function scrollOffset(page: Page): Promise<{ x: number; y: number }> {
  const session = await page.createCDPSession();
  try {
    const { cssVisualViewport } = await session.send("Page.getLayoutMetrics");
    return { x: cssVisualViewport.pageX, y: cssVisualViewport.pageY };
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/** Captures `area` of the page (CSS px of the document: the viewport, the full page, an element or a clip) at `viewport` in the requested form. */
export async function shoot(page: Page, viewport: Viewport, area: Clip, options: CaptureOptions, host: string | null): Promise<Shot> {
  const { height } = area;
  try {
    if (options.format === "pdf") return await printPdf(page, viewport, height, options.pdf);
    const output = { ...options, format: options.format };
    const mockup = options.style === "mockup";
    const part = options.fullPage || options.selector !== undefined || options.clip !== undefined;
    let capture: Buffer | Sharp;
    if (needsTiles(area, viewport.deviceScaleFactor)) {
      // Tiles are clips of the document: the viewport alone is the one where the page is scrolled to,
      // taken as it is on screen (fixed elements where they show), not as a part of the whole layout.
      const clip = part ? area : { ...area, ...(await scrollOffset(page)) };
      capture = await captureTiles(page, clip, viewport.deviceScaleFactor, { omitBackground: options.omitBackground, beyondViewport: part });
    } else {
      // A mockup composes a lossless capture (zlib's fast setting, since it is decoded at once).
      const type = mockup ? "png" : chromiumFormat(output);
      capture = Buffer.from(
        await page.screenshot({
          type,
          ...(type === "png" ? { optimizeForSpeed: true } : { quality: options.quality }),
          ...(part ? { clip: { ...area }, captureBeyondViewport: true } : {}),
          ...(options.omitBackground ? { omitBackground: true } : {}),
        }),
      );
    }
    if (mockup) {
      const png = Buffer.isBuffer(capture) ? capture : await capture.png({ compressionLevel: 1 }).toBuffer();
      capture = await composeMockup(png, viewport.width, height, { ...output, deviceScaleFactor: viewport.deviceScaleFactor, host });
    }
    const body = await finishImage(capture, output);
    const size = imageSize(body) ?? { width: Math.round(area.width * viewport.deviceScaleFactor), height: Math.round(height * viewport.deviceScaleFactor) };
    return { body, ...size };
  } catch (error) {
    throw translateRenderError(error);
  }
}
