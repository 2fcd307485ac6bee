import type { Page } from "puppeteer-core";
import { translateRenderError } from "./errors.js";
import { imageSize } from "./image-size.js";
import { composeMockup } from "./mockup.js";
import type { CaptureOptions, OutputFormat } from "./options.js";
import type { Viewport } from "./viewport.js";

// Capture and encode: the settled page as PNG, JPEG or a one-page PDF, framed as a mockup if asked.

export const CONTENT_TYPES: Record<OutputFormat, string> = { png: "image/png", jpeg: "image/jpeg", pdf: "application/pdf" };

/** The encoded output and its size: pixels for images, CSS pixels of the page for PDF. */
export interface Shot {
  readonly body: Buffer;
  readonly width: number;
  readonly height: number;
}

/** Captures `height` CSS px of the page at `viewport` (all of the document with `fullPage`) in the requested form. */
export async function shoot(page: Page, viewport: Viewport, height: number, options: CaptureOptions, host: string | null): Promise<Shot> {
  try {
    if (options.format === "pdf") {
      await page.emulateMediaType("screen");
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
    const shot = Buffer.from(
      await page.screenshot({
        // A mockup composes a lossless capture; zlib's fast setting, since it is decoded at once.
        ...(mockup ? { type: "png" as const, optimizeForSpeed: true } : { type: options.format }),
        ...(!mockup && options.format === "jpeg" ? { quality: options.quality } : {}),
        ...(options.fullPage ? { clip: { x: 0, y: 0, width: viewport.width, height }, captureBeyondViewport: true } : {}),
      }),
    );
    const body = mockup ? await composeMockup(shot, viewport.width, height, { ...options, format: options.format === "jpeg" ? "jpeg" : "png", host }) : shot;
    const size = imageSize(body) ?? { width: Math.round(viewport.width * viewport.deviceScaleFactor), height: Math.round(height * viewport.deviceScaleFactor) };
    return { body, ...size };
  } catch (error) {
    throw translateRenderError(error);
  }
}
