import { config } from "../../config.js";
import { type Deadline, pageLoadLimit } from "../../deadline.js";
import { AppError } from "../../errors.js";
import { withEncoderPage } from "../browser.js";
import { type CaptureLimits, pageIdentity, type SettledPage, withSettledPage } from "../capture.js";
import { assertValidSelectors } from "../controls.js";
import { type Geo, geoField } from "../geo.js";
import { MAX_CAPTURE_HEIGHT } from "../limits.js";
import type { CaptureOptions, RenderSource } from "../options.js";
import type { Incomplete } from "../page-load.js";
import type { PageLogs } from "../page-log.js";
import { shoot } from "../shoot.js";
import { type Viewport, viewportFor } from "../viewport.js";
import { encodeVideo, type FrameImages, type VideoFormat } from "./encoder.js";
import { type AnimatedImageFormat, encodeAnimatedImage } from "./images.js";
import { type Easing, frameCount, scrollPositions } from "./plan.js";

// A page as a moving picture (docs/api.md, "Animate"): the page loaded and settled as a full-page
// screenshot is, then scrolled from its top to a target in frames. "synthetic": one tall capture,
// each frame a crop of it (exact, fast, the same every time). "live": the page scrolled for real,
// a capture per frame (animations, lazy loading and sticky headers move as a visitor sees them;
// jobs only, where the time is). Video is encoded by Chromium's WebCodecs in the composer browser
// (./encoder.ts), GIF and WebP by sharp (./images.ts).

type AnimationFormat = VideoFormat | AnimatedImageFormat;

const ANIMATION_CONTENT_TYPES: Record<AnimationFormat, string> = {
  mp4: "video/mp4",
  webm: "video/webm",
  gif: "image/gif",
  webp: "image/webp",
};

/** What an animation is asked for, besides how its page loads (CaptureOptions). */
export interface AnimationOptions {
  readonly format: AnimationFormat;
  /** Seconds. */
  readonly duration: number;
  readonly fps: number;
  readonly mode: "synthetic" | "live";
  readonly scroll: {
    /** "bottom", a CSS selector (its element's top), or CSS px from the top. */
    readonly to: string | number;
    readonly easing: Easing;
    /** ms at the top before the scroll, and at the target after it: inside `duration`. */
    readonly holdStart: number;
    readonly holdEnd: number;
    /** Scroll back to the top after the hold at the target. */
    readonly back: boolean;
  };
}

/** A finished animation. */
export interface Animation {
  readonly body: Buffer;
  readonly format: AnimationFormat;
  readonly contentType: string;
  /** Frame size in device px. */
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  readonly durationMs: number;
  /** The scroll target reached, CSS px from the top. */
  readonly scrolledTo: number;
  readonly url: string | null;
  readonly title: string;
  readonly renderMs: number;
  readonly incomplete: Incomplete | null;
  /** What the page did, when `capture` asked for it. */
  readonly logs?: PageLogs | undefined;
  /** Where `geo: "auto"` found the page's country, when it was asked. */
  readonly geo?: Geo | undefined;
}

/**
 * Our own work per frame per Mpx, ms, with room (two slow cores, another render beside it): the
 * bound a request is held to (refused past it) and the time it is given past the page load.
 */
const WORK_MS_PER_MPX_FRAME: Record<AnimationFormat, number> = { mp4: 12, webm: 20, gif: 40, webp: 60 };
/** A live frame's scroll, wait and capture, ms (measured ~135 ms of CPU at 720p). */
const LIVE_MS_PER_FRAME = 250;
/** The most of our own work an animation answered at once may ask, and a job's item. */
const MAX_WORK_MS = { now: 12_000, job: 90_000 } as const;
/** The largest frame, device px: 4K UHD (H.264's and VP9's levels go no further in a browser). */
const MAX_FRAME_PIXELS = 3840 * 2160;

/**
 * Memory, as a budget checked before the work starts (docs/api.md, "Animate"). What our encoding
 * holds at its peak, fitted to the peak RSS of the encoding alone (VmHWM), measured at 1280x720 on
 * random noise (the worst case for a palette and for compression), from the bytes of RGBA it keeps
 * (`frame`: one frame's; `sheet`: the tall capture's, or every live frame's). A WebP is written a
 * frame at a time (./webp.ts): it holds a synthetic scroll's capture twice (as captured and
 * decoded) or two live frames, and its file twice (a sixth of a frame's bytes a frame on noise:
 * 0.34 where 0.45 is counted; 338 MB with a 20,000-row sheet and 135 frames, 327 MB for 200 live
 * ones). A GIF holds its sheet twice (its captures, and decoded to be quantised) and its file twice
 * (a third of a frame's bytes a frame: 0.68, counted 0.7; 565 MB for the 20,000-row sheet and 193
 * frames, 668 MB for 70 live ones). Both take 64 MB besides, and two frames' bytes more for the
 * encoder's own buffers, which grow with the frame. A video is encoded by the browser a frame at a
 * time, from the sheet (2 x it).
 */
const ENCODER_BYTES = 64 * 1024 * 1024;
const memoryOf: Record<AnimationFormat, (sheetBytes: number, frameBytes: number, frames: number) => number> = {
  gif: (sheet, frame, frames) => 2 * sheet + 0.7 * frame * frames + 2 * frame + ENCODER_BYTES,
  webp: (sheet, frame, frames) => 2 * sheet + 0.45 * frame * frames + 2 * frame + ENCODER_BYTES,
  mp4: (sheet) => 2 * sheet,
  webm: (sheet) => 2 * sheet,
};
/**
 * What an animation's encoding may hold: its function's 2,048 MB, less 1,024 MB for Chromium beside
 * it (its browser, the page's renderer, which a heavy page fills, and the encoder's) and 256 MB for
 * Node's own. Measured (PSS of the process and its browsers): with 1,024 MB here, a live GIF at its
 * most on a page of 100 Mpx of canvas noise peaked at 2,106 MB; at 768, see docs/api.md.
 */
export const ANIMATION_MEMORY_BYTES = (2048 - 1024 - 256) * 1024 * 1024;

/** The bytes an animation's encoding holds at its peak, with a sheet of `rows` (device px; a live GIF stacks every frame, a live WebP or video keeps one). */
function animationMemory(options: Pick<AnimationOptions, "format" | "mode">, frames: number, size: { width: number; height: number }, rows: number): number {
  const frameBytes = size.width * size.height * 4;
  const sheet = options.mode === "live" ? (options.format === "gif" ? frames * frameBytes : frameBytes) : rows * size.width * 4;
  return memoryOf[options.format](sheet, frameBytes, frames);
}

/** The rows (device px) an animation's sheet may hold within ANIMATION_MEMORY_BYTES. */
const sheetRowsWithin = (options: Pick<AnimationOptions, "format" | "mode">, frames: number, size: { width: number; height: number }) => {
  const perRow = animationMemory(options, frames, size, 1) - animationMemory(options, frames, size, 0);
  return perRow === 0 ? Number.POSITIVE_INFINITY : Math.floor((ANIMATION_MEMORY_BYTES - animationMemory(options, frames, size, 0)) / perRow);
};

/** The frame size of an animation at `viewport`, device px: H.264 codes only even sizes, so an MP4's odd side loses its last pixel. */
function frameSize(viewport: Viewport, format: AnimationFormat): { width: number; height: number } {
  const even = (n: number) => (format === "mp4" ? n - (n % 2) : n);
  return { width: even(Math.round(viewport.width * viewport.deviceScaleFactor)), height: even(Math.round(viewport.height * viewport.deviceScaleFactor)) };
}

/** The frames of an animation, and the time our own work on them may take (ms). */
function animationWork(options: Pick<AnimationOptions, "format" | "duration" | "fps" | "mode">, size: { width: number; height: number }) {
  const frames = frameCount(options.duration, options.fps);
  const mpx = (size.width * size.height) / 1e6;
  return { frames, ms: Math.round(frames * (mpx * WORK_MS_PER_MPX_FRAME[options.format] + (options.mode === "live" ? LIVE_MS_PER_FRAME : 0))) };
}

/** The time our own work on an animation may take past its page's load (ms). */
export const animationWorkMs = (options: CaptureOptions, animation: AnimationOptions) =>
  animationWork(animation, frameSize(viewportFor(options), animation.format)).ms;

/** Why an animation of this size and length cannot be made where it was asked (answered at once, or as a job's item), or null. */
export function animationRefusal(
  options: Pick<AnimationOptions, "format" | "duration" | "fps" | "mode">,
  viewport: Viewport,
  where: "now" | "job",
): string | null {
  const size = frameSize(viewport, options.format);
  if (size.width * size.height > MAX_FRAME_PIXELS)
    return `frames of ${size.width}x${size.height} device px are larger than 3840x2160 (${MAX_FRAME_PIXELS / 1e6} Mpx): a smaller width, height or deviceScaleFactor`;
  const work = animationWork(options, size);
  // At least a viewport's rows: the sheet of a scroll that does not move.
  const needs = animationMemory(options, work.frames, size, size.height);
  if (needs > ANIMATION_MEMORY_BYTES) {
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024).toLocaleString("en-US");
    return `${work.frames} frames of ${size.width}x${size.height} as ${options.format} need about ${mb(needs)} MB to encode, more than the ${mb(ANIMATION_MEMORY_BYTES)} MB an animation may hold: fewer frames (duration x fps), a smaller size, or MP4 or WebM (encoded a frame at a time)`;
  }
  if (work.ms <= MAX_WORK_MS[where]) return null;
  const most = Math.floor((MAX_WORK_MS[where] / work.ms) * work.frames);
  return where === "now"
    ? `${work.frames} frames of ${size.width}x${size.height} as ${options.format} is more than an answer at once can make (at most ${most} frames at this size): fewer frames (duration x fps), a smaller size, or a job (POST /api/v1/jobs, endpoint "animate")`
    : `${work.frames} frames of ${size.width}x${size.height} as ${options.format} is more than a job's item can make (at most ${most} frames at this size): fewer frames (duration x fps) or a smaller size`;
}

/** The scroll target in CSS px: the page's bottom (`bottom` is the furthest the viewport can go), an element's top, or a length, within it. */
async function scrollTarget({ loaded }: SettledPage, to: string | number, bottom: number): Promise<number> {
  if (typeof to === "number") return Math.min(to, bottom);
  if (to === "bottom") return bottom;
  await assertValidSelectors(loaded.page, [["scroll.to", to]]);
  const top = await loaded.evaluate<number | null>(`(() => {
    const element = document.querySelector(${JSON.stringify(to)});
    return element ? element.getBoundingClientRect().top + window.scrollY : null;
  })()`);
  if (top === null) throw new AppError("SELECTOR_NOT_FOUND", `scroll.to: no element matches "${to}" on the page.`);
  return Math.max(0, Math.min(Math.round(top), bottom));
}

/** The frames of a live scroll: the page scrolled to each top in turn, and its viewport captured there. */
async function* liveFrames({ loaded }: SettledPage, tops: readonly number[], scale: number): FrameImages {
  const { page } = loaded;
  for (const top of tops) {
    // Instantly, whatever the page's scroll-behavior; then two frames, so what scrolling moves has drawn.
    await loaded.evaluate(
      `(() => { window.scrollTo({ top: ${top / scale}, behavior: "instant" }); return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))); })()`,
    );
    const png = Buffer.from(await loaded.settled(() => page.screenshot({ type: "png", optimizeForSpeed: true })));
    yield { png, tops: [0] };
  }
}

/** Time kept past our own work's estimate for the capture and the answer. */
const CAPTURE_MS = 3_000;

/**
 * Renders `source` with `options` and makes it the animation `animation` asks for, before the
 * deadline. The page is given the time to load that the frames' work leaves.
 */
export function animate(
  source: RenderSource,
  options: CaptureOptions,
  animation: AnimationOptions,
  deadline: Deadline,
  limits: CaptureLimits = {},
): Promise<Animation> {
  const viewport = viewportFor(options);
  const scale = viewport.deviceScaleFactor;
  const size = frameSize(viewport, animation.format);
  const work = animationWork(animation, size);
  // The tall capture stops where the sheet would no longer fit the memory budget (the scroll's end with it).
  const memoryRows = Math.floor(sheetRowsWithin(animation, work.frames, size) / scale);
  limits = { ...limits, maxHeight: Math.min(limits.maxHeight ?? MAX_CAPTURE_HEIGHT, memoryRows) };
  const pageLoadMs = Math.min(pageLoadLimit(deadline, config.PAGE_LOAD_TIMEOUT_MS), deadline.at - Date.now() - work.ms - CAPTURE_MS);
  // Settled as a full page is: scrolled through once, so lazy content has loaded.
  const settle = { ...options, format: "png", fullPage: true } as const;
  return withSettledPage(
    source,
    settle,
    { ...deadline, pageLoadMs },
    async (settledPage) => {
      const { loaded, settled, started } = settledPage;
      const target = await scrollTarget(settledPage, animation.scroll.to, Math.max(0, settled.height - viewport.height));
      const { holdStart, holdEnd, easing, back } = animation.scroll;
      let tops = scrollPositions(
        { frames: work.frames, fps: animation.fps, easing, back, holdStartMs: holdStart, holdEndMs: holdEnd },
        Math.round(target * scale),
      );
      let images: FrameImages;
      if (animation.mode === "live") {
        images = liveFrames(settledPage, tops, scale);
      } else {
        // One capture from the top to the target's viewport; every frame is cut from it.
        const area = { x: 0, y: 0, width: viewport.width, height: target + viewport.height };
        const shot = await loaded.settled(() => shoot(loaded.page, viewport, area, { ...settle, style: undefined }, null));
        // Rounding to device pixels must not cut a frame past the capture's end.
        tops = tops.map((top) => Math.min(top, Math.max(0, shot.height - size.height)));
        images = (async function* () {
          yield { png: shot.body, tops };
        })();
      }
      const body = await withEncoderPage(deadline.signal, (page) =>
        animation.format === "mp4" || animation.format === "webm"
          ? encodeVideo(page, animation.format, size, animation.fps, images)
          : encodeAnimatedImage(animation.format, size, animation.fps, images),
      );
      return {
        body,
        format: animation.format,
        contentType: ANIMATION_CONTENT_TYPES[animation.format],
        ...size,
        frames: tops.length,
        durationMs: Math.round((tops.length * 1000) / animation.fps),
        scrolledTo: target,
        ...(await pageIdentity(loaded, source)),
        renderMs: Date.now() - started,
        incomplete: loaded.incomplete,
        ...geoField(options),
      };
    },
    limits,
  );
}
