import type { CaptureOptions } from "./options.js";

/** The viewport a phone mockup renders when the request sets no width (an iPhone 14/15). */
export const PHONE_VIEWPORT = { width: 390, height: 844 } as const;

/** The width when the request sets none. */
export const DEFAULT_WIDTH = 1280;

/** The browser viewport of a render, decided once, here. */
export interface Viewport {
  /** CSS px. */
  readonly width: number;
  readonly height: number;
  readonly deviceScaleFactor: number;
  /** Rendered as a phone: mobile emulation, touch, a mobile user agent. */
  readonly mobile: boolean;
}

/**
 * The viewport for a request (docs/api.md): `width` or 1280; `height` or 16:10 of the width. A phone
 * mockup uses a phone's proportions (844/390) when the height is not given, and, when the width is
 * not given either, renders the page as a phone does: 390 wide, mobile emulation and touch.
 */
export function viewportFor(options: Pick<CaptureOptions, "width" | "height" | "deviceScaleFactor" | "style" | "frame">): Viewport {
  const phone = options.style === "mockup" && options.frame === "phone";
  const width = options.width ?? (phone ? PHONE_VIEWPORT.width : DEFAULT_WIDTH);
  const height = options.height ?? Math.round(phone ? (width * PHONE_VIEWPORT.height) / PHONE_VIEWPORT.width : (width * 10) / 16);
  return { width, height, deviceScaleFactor: options.deviceScaleFactor, mobile: phone && options.width === undefined };
}
