import type { UserAgents } from "./browser.js";
import type { CaptureOptions, DeviceName } from "./options.js";

/** The viewport a phone mockup renders when the request sets no width (an iPhone 14/15). */
export const PHONE_VIEWPORT = { width: 390, height: 844 } as const;
/** The viewport a tablet mockup renders when the request sets no width (an iPad Air, as the "ipad" device). */
const TABLET_VIEWPORT = { width: 820, height: 1180 } as const;
const HANDHELD: Partial<Record<CaptureOptions["frame"], { width: number; height: number }>> = { phone: PHONE_VIEWPORT, tablet: TABLET_VIEWPORT };

/** The width when the request sets none. */
export const DEFAULT_WIDTH = 1280;
const DEFAULT_SCALE = 2;

// Safari's user agents on iOS and iPadOS 17 (the browser's own Chrome strings stand for Android and desktop).
const IOS_SAFARI = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const IPAD_SAFARI = "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** Device presets (docs/api.md, "Devices"): CSS viewport, scale, mobile emulation and touch, user agent. */
const DEVICES: Readonly<
  Record<DeviceName, { width: number; height: number; deviceScaleFactor: number; mobile: boolean; userAgent: string | keyof UserAgents }>
> = {
  "iphone-15": { width: 393, height: 852, deviceScaleFactor: 3, mobile: true, userAgent: IOS_SAFARI },
  "pixel-8": { width: 412, height: 915, deviceScaleFactor: 2.625, mobile: true, userAgent: "mobile" },
  ipad: { width: 820, height: 1180, deviceScaleFactor: 2, mobile: true, userAgent: IPAD_SAFARI },
  "desktop-hd": { width: 1920, height: 1080, deviceScaleFactor: 1, mobile: false, userAgent: "desktop" },
};

/** The browser viewport of a render, decided once, here. */
export interface Viewport {
  /** CSS px. */
  readonly width: number;
  readonly height: number;
  readonly deviceScaleFactor: number;
  /** Rendered as a phone: mobile emulation, touch, a mobile user agent. */
  readonly mobile: boolean;
  /** The device preset's user agent, if one was asked for. */
  readonly device?: DeviceName | undefined;
}

/** The user agent a render sends: the request's own, the device's, or the browser's (as a phone when mobile). */
export function userAgentFor(viewport: Viewport, userAgents: UserAgents, requested?: string): string {
  if (requested) return requested;
  const preset = viewport.device ? DEVICES[viewport.device].userAgent : viewport.mobile ? "mobile" : "desktop";
  return preset === "mobile" || preset === "desktop" ? userAgents[preset] : preset;
}

/**
 * The viewport for a request (docs/api.md): `width` or 1280; `height` or 16:10 of the width. A phone
 * (tablet) mockup uses a phone's (tablet's) proportions when the height is not given, and, when the
 * width is not given either, renders the page as that device does: 390 (820) wide, mobile emulation
 * and touch (and an iPad's user agent). A
 * `device` gives its own size, scale and emulation; the request's own fields win over it.
 */
export function viewportFor(options: Pick<CaptureOptions, "width" | "height" | "deviceScaleFactor" | "style" | "frame" | "device">): Viewport {
  const preset = options.device ? DEVICES[options.device] : undefined;
  const deviceScaleFactor = options.deviceScaleFactor ?? preset?.deviceScaleFactor ?? DEFAULT_SCALE;
  if (preset) {
    const width = options.width ?? preset.width;
    const height = options.height ?? (options.width === undefined ? preset.height : Math.round((width * preset.height) / preset.width));
    return { width, height, deviceScaleFactor, mobile: preset.mobile, device: options.device };
  }
  // A phone or tablet frame: the device's proportions; without a width, the page as that device renders it.
  const handheld = options.style === "mockup" ? HANDHELD[options.frame] : undefined;
  const width = options.width ?? handheld?.width ?? DEFAULT_WIDTH;
  const height = options.height ?? Math.round(handheld ? (width * handheld.height) / handheld.width : (width * 10) / 16);
  const mobile = handheld !== undefined && options.width === undefined;
  return { width, height, deviceScaleFactor, mobile, ...(mobile && options.frame === "tablet" ? { device: "ipad" as const } : {}) };
}
