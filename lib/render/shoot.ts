import type { Page } from "puppeteer-core";
import { translateRenderError } from "./errors.js";
import { imageSize } from "./image-size.js";
import { composeMockup } from "./mockup.js";
import type { CaptureOptions, Clip, OutputFormat } from "./options.js";
import { captureTiles, needsTiles } from "./tiles.js";
import type { Viewport } from "./viewport.js";

// Capture and encode: the settled page as PNG, JPEG or a one-page PDF, framed as a mockup if asked;
// areas past Chromium's one-piece limit in tiles (lib/render/tiles.ts).

export const CONTENT_TYPES: Record<OutputFormat, string> = { png: "image/png", jpeg: "image/jpeg", pdf: "application/pdf" };

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
    const shot = Buffer.from(
      await page.screenshot({
        // A mockup composes a lossless capture; zlib's fast setting, since it is decoded at once.
        ...(mockup ? { type: "png" as const, optimizeForSpeed: true } : { type: options.format }),
        ...(!mockup && options.format === "jpeg" ? { quality: options.quality } : {}),
        ...(part ? { clip: { ...area }, captureBeyondViewport: true } : {}),
        ...(options.omitBackground ? { omitBackground: true } : {}),
      }),
    );
    const body = mockup
      ? await composeMockup(shot, viewport.width, height, {
          ...options,
          deviceScaleFactor: viewport.deviceScaleFactor,
          format: options.format === "jpeg" ? "jpeg" : "png",
          host,
        })
      : shot;
    const size = imageSize(body) ?? { width: Math.round(area.width * viewport.deviceScaleFactor), height: Math.round(height * viewport.deviceScaleFactor) };
    return { body, ...size };
  } catch (error) {
    throw translateRenderError(error);
  }
}
