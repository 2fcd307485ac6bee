// Mockups of a layout met before are composed in Node over the frame kept as pixels
// (lib/render/mockup/mockup-frame.ts): they must look exactly as the composer draws them whole. In process,
// with the real composer browser; the capture is a busy synthetic pattern, so that a pixel out of
// place anywhere shows.
import { beforeAll, describe, expect, it } from "vitest";
import type { MockupOptions } from "../../lib/render/mockup/mockup.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";

type Mockup = typeof import("../../lib/render/mockup/mockup.js");
let composeMockup: Mockup["composeMockup"];
let frameCacheStats: Mockup["frameCacheStats"];
let finishImage: typeof import("../../lib/render/encode.js").finishImage;
let sharp: typeof import("sharp").default;
let renderStats: typeof import("../../lib/render/browser.js").renderStats;

beforeAll(async () => {
  useSharedStackInProcess();
  ({ composeMockup, frameCacheStats } = await import("../../lib/render/mockup/mockup.js"));
  ({ finishImage } = await import("../../lib/render/encode.js"));
  sharp = (await import("sharp")).default;
  const browser = await import("../../lib/render/browser.js");
  renderStats = browser.renderStats;
  return () => browser.closeBrowser();
});

/** A PNG of `width` x `height` whose every pixel differs from its neighbours. */
function pattern(width: number, height: number): Promise<Buffer> {
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rgb.set([(x * 7 + y) & 255, (y * 5 + x * 3) & 255, (x ^ y) & 255], (y * width + x) * 3);
  }
  return sharp(rgb, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

const options = (extra: Partial<MockupOptions>): MockupOptions => ({
  format: "png",
  quality: 80,
  background: "sunset",
  padding: 48,
  borderRadius: 12,
  shadow: true,
  frame: "browser",
  darkMode: false,
  deviceScaleFactor: 2,
  host: "example.com",
  omitBackground: false,
  ...extra,
});

/** `composeMockup`, encoded, whether the composer drew it whole (else it was composed over a kept frame), and the composer pages it took. */
async function compose(capture: Buffer, width: number, height: number, mockup: MockupOptions) {
  const before = frameCacheStats().composed;
  const pages = renderStats().composerPagesUsed;
  const image = await finishImage(await composeMockup(capture, width, height, mockup), mockup);
  return { drawnWhole: frameCacheStats().composed === before, composerPages: renderStats().composerPagesUsed - pages, image };
}

/** The same mockup three times. */
async function threeTimes(width: number, height: number, mockup: MockupOptions) {
  const capture = await pattern(Math.round(width * mockup.deviceScaleFactor), Math.round(height * mockup.deviceScaleFactor));
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await compose(capture, width, height, mockup));
  return answers;
}

/** The largest difference of any channel of any pixel between two images of the same size. */
async function largestDifference(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = await Promise.all([a, b].map((image) => sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true })));
  expect([y!.info.width, y!.info.height]).toEqual([x!.info.width, x!.info.height]);
  let largest = 0;
  for (let i = 0; i < x!.data.length; i++) largest = Math.max(largest, Math.abs(x!.data[i]! - y!.data[i]!));
  return largest;
}

describe("mockups composed over a kept frame", () => {
  it.each([
    ["browser, its host in the bar", 640, 400, { frame: "browser" }],
    ["browser, dark, a long host cut short", 640, 400, { frame: "browser", darkMode: true, host: `${"very-long-label-".repeat(15)}end.example.co.uk` }],
    ["phone at 3x", 390, 500, { frame: "phone", deviceScaleFactor: 3, background: "#123456" }],
    ["tablet at 1x, dark", 600, 420, { frame: "tablet", deviceScaleFactor: 1, darkMode: true }],
    ["laptop (rounded screen corners)", 700, 440, { frame: "laptop" }],
    ["no frame, very round corners", 500, 300, { frame: "none", borderRadius: 100, background: "aurora" }],
  ] as const)("%s: drawn whole the first time, from the frame from the second, alike to the pixel", async (_, width, height, extra) => {
    const before = frameCacheStats().frames;
    const [first, second, third] = await threeTimes(width, height, options(extra));
    expect([first!.drawnWhole, second!.drawnWhole, third!.drawnWhole]).toEqual([true, false, false]);
    expect(frameCacheStats().frames).toBe(before + 1);
    // The third has its frame and address kept: it takes no composer page at all.
    expect(third!.composerPages).toBe(0);
    // Rounding of the blend: at most 2 levels of 255 anywhere.
    expect(await largestDifference(first!.image, third!.image)).toBeLessThanOrEqual(2);
  });

  it("another host in the same layout uses the kept frame, with its own address", async () => {
    const [a] = await threeTimes(640, 400, options({ frame: "browser", host: "first.example" }));
    const mockup = options({ frame: "browser", host: "second.example" });
    const capture = await pattern(1280, 800);
    const composed = await compose(capture, 640, 400, mockup);
    expect(composed.drawnWhole).toBe(false);
    // Not the first host's bar: the address differs; the whole looks as the composer draws it.
    expect(await largestDifference(a!.image, composed.image)).toBeGreaterThan(50);
    const drawnWhole = await compose(capture, 640, 400, { ...mockup, omitBackground: true });
    expect(drawnWhole.drawnWhole).toBe(true);
    expect(await largestDifference(drawnWhole.image, composed.image)).toBeLessThanOrEqual(2);
  });

  it("a capture that may be transparent, or a fractional device scale, is always drawn whole and keeps no frame", async () => {
    const before = frameCacheStats();
    for (const mockup of [options({ omitBackground: true, padding: 20 }), options({ deviceScaleFactor: 1.5, padding: 20 })]) {
      const answers = await threeTimes(400, 300, mockup);
      expect(answers.map((answer) => answer.drawnWhole)).toEqual([true, true, true]);
    }
    expect(frameCacheStats()).toEqual(before);
  });

  it("a JPEG, a thumbnail or an AVIF of a kept layout is composed over the frame too", async () => {
    const mockup = options({ frame: "none", padding: 24 });
    await threeTimes(400, 300, mockup);
    const capture = await pattern(800, 600);
    const thumbnail = await compose(capture, 400, 300, { ...mockup, imageWidth: 200 });
    expect(thumbnail.drawnWhole).toBe(false);
    expect((await sharp(thumbnail.image).metadata()).width).toBe(200);
    const avif = await compose(capture, 400, 300, { ...mockup, format: "avif" });
    expect(avif.drawnWhole).toBe(false);
    expect((await sharp(avif.image).metadata()).format).toBe("heif");
    const jpeg = await compose(capture, 400, 300, { ...mockup, format: "jpeg", quality: 90 });
    expect(jpeg.drawnWhole).toBe(false);
    expect((await sharp(jpeg.image).metadata()).format).toBe("jpeg");
  });

  it("keeps frames within their memory budget", async () => {
    // Eight layouts of ~16 MB (1280x800 at 2x with padding), each met twice: at most 96 MB kept.
    for (let i = 0; i < 8; i++) {
      const mockup = options({ frame: "none", padding: 40 + i });
      const capture = await pattern(2560, 1600);
      for (let n = 0; n < 2; n++) await composeMockup(capture, 1280, 800, mockup);
    }
    const { frames, bytes } = frameCacheStats();
    expect(bytes).toBeLessThanOrEqual(96 * 2 ** 20);
    expect(frames).toBeGreaterThanOrEqual(5);
  });
});
