import type { OutputFormat } from "./options.js";
import type { Viewport } from "./viewport.js";

// Caps on what one render may produce (docs/api.md, "Limits"), so that no request can ask a 2 GB
// function for gigabytes of pixels: 3840 x 20,000 CSS px at 3x would be 691 Mpx (2.8 GB of RGBA).

/** Largest output, in device pixels; a mockup counts twice (the capture and its composition are both in memory). */
export const MAX_OUTPUT_PIXELS = 100_000_000;

/** Full-page captures stop at this many CSS pixels (docs/api.md); a job's items at JOB_CAPTURE_HEIGHT (they have the time). */
export const MAX_CAPTURE_HEIGHT = 20_000;
export const JOB_CAPTURE_HEIGHT = 50_000;

/** Device pixels of a capture `cssHeight` tall at `viewport`, as the cap counts them. */
export const outputPixels = (viewport: Viewport, cssHeight: number, mockup: boolean): number =>
  Math.round(viewport.width * viewport.deviceScaleFactor) * Math.round(cssHeight * viewport.deviceScaleFactor) * (mockup ? 2 : 1);

/** WebP cannot be taller than this (device px); AVIF is held to it too (encoding it past that takes many seconds). */
const MAX_WEBP_AVIF_SIDE = 16_383;

/**
 * The tallest capture, in CSS px, that keeps within `heightCap` (MAX_CAPTURE_HEIGHT, or a job's
 * JOB_CAPTURE_HEIGHT) and MAX_OUTPUT_PIXELS at `viewport` (and MAX_WEBP_AVIF_SIDE in those formats).
 */
export function maxCaptureHeight(viewport: Viewport, mockup: boolean, format: OutputFormat = "png", heightCap = MAX_CAPTURE_HEIGHT): number {
  const perRow = Math.round(viewport.width * viewport.deviceScaleFactor) * viewport.deviceScaleFactor * (mockup ? 2 : 1);
  const byFormat = format === "webp" || format === "avif" ? Math.floor(MAX_WEBP_AVIF_SIDE / viewport.deviceScaleFactor) : heightCap;
  return Math.min(heightCap, byFormat, Math.floor(MAX_OUTPUT_PIXELS / perRow));
}
