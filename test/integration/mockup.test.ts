// Mockups decoded and checked the way a person would look at them.
import { describe, expect, inject, it } from "vitest";
import {
  BROWSER_BAR_HEIGHT,
  LAPTOP_BASE,
  LAPTOP_BEZEL,
  LAPTOP_TOP_BEZEL,
  laptopOverhang,
  PHONE_BEZEL,
  PHONE_STATUS_BAR,
  TABLET_BEZEL,
  TABLET_STATUS_BAR,
} from "../../lib/render/mockup/mockup.js";
import { decode, postJson, rgb } from "../helpers/api.js";
import { readImage } from "../helpers/image.js";

const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const mockup = (body: Record<string, unknown>) => postJson("/api/v1/screenshot", { style: "mockup", ...body });
const close = (a: { r: number; g: number; b: number }, b: { r: number; g: number; b: number }, tolerance = 2) =>
  Math.abs(a.r - b.r) <= tolerance && Math.abs(a.g - b.g) <= tolerance && Math.abs(a.b - b.b) <= tolerance;
const BG = { r: 0x12, g: 0x34, b: 0x56 };

describe("mockup size", () => {
  it.each([
    ["none", 0, 0],
    ["browser", 0, BROWSER_BAR_HEIGHT],
    ["phone", 2 * PHONE_BEZEL, 2 * PHONE_BEZEL + PHONE_STATUS_BAR],
    ["tablet", 2 * TABLET_BEZEL, 2 * TABLET_BEZEL + TABLET_STATUS_BAR],
    ["laptop", 2 * (LAPTOP_BEZEL + laptopOverhang(600)), LAPTOP_TOP_BEZEL + LAPTOP_BEZEL + LAPTOP_BASE],
  ] as const)("frame %s: capture + 2 x padding (+ frame) at the device scale", async (frame, extraW, extraH) => {
    const res = await mockup({ url: fixture("/simple"), frame, width: 600, height: 400, padding: 40, deviceScaleFactor: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const image = await decode(res);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([(600 + extraW + 80) * 2, (400 + extraH + 80) * 2]);
  });

  it("a phone mockup without width renders the page as a phone (390 wide, touch, mobile) in phone proportions", async () => {
    const image = await decode(await mockup({ url: fixture("/mobile-probe"), frame: "phone", padding: 20, deviceScaleFactor: 1 }));
    expect([image.bitmap.width, image.bitmap.height]).toEqual([390 + 2 * PHONE_BEZEL + 40, 844 + 2 * PHONE_BEZEL + PHONE_STATUS_BAR + 40]);
    // The middle of the screen shows the probe: green only under phone emulation.
    expect(rgb(image, image.bitmap.width / 2, image.bitmap.height / 2)).toEqual({ r: 0, g: 255, b: 0 });
    expect(image.bitmap.height / image.bitmap.width).toBeGreaterThan(2);
  });

  it("a tablet mockup without width renders the page as an iPad (820 wide, touch, mobile) in its proportions", async () => {
    const image = await decode(await mockup({ url: fixture("/mobile-probe?width=820"), frame: "tablet", padding: 20, deviceScaleFactor: 1 }));
    expect([image.bitmap.width, image.bitmap.height]).toEqual([820 + 2 * TABLET_BEZEL + 40, 1180 + 2 * TABLET_BEZEL + TABLET_STATUS_BAR + 40]);
    expect(rgb(image, image.bitmap.width / 2, image.bitmap.height / 2)).toEqual({ r: 0, g: 255, b: 0 });
  });

  it("a laptop stands on a base wider than its lid: beside the lid is background, below it the base", async () => {
    const image = await decode(
      await mockup({
        url: fixture("/simple"),
        frame: "laptop",
        width: 800,
        height: 500,
        padding: 40,
        background: "#123456",
        shadow: false,
        deviceScaleFactor: 1,
      }),
    );
    const overhang = laptopOverhang(800);
    const baseTop = 40 + LAPTOP_TOP_BEZEL + 500 + LAPTOP_BEZEL;
    // Just outside the lid, level with the screen: background.
    expect(rgb(image, 40 + overhang - 6, 40 + 200)).toEqual(BG);
    // The lid's bezel (near black) and the screen (the red page).
    expect(rgb(image, 40 + overhang + LAPTOP_BEZEL / 2, 40 + 200).r).toBeLessThan(40);
    expect(rgb(image, 40 + overhang + LAPTOP_BEZEL + 400, 40 + LAPTOP_TOP_BEZEL + 250)).toEqual({ r: 255, g: 0, b: 0 });
    // Below the lid, out to the overhang: the silver base, lighter than the background.
    const base = rgb(image, 40 + overhang / 2 + 4, baseTop + 5);
    expect(base.r + base.g + base.b).toBeGreaterThan(450);
  });

  it("mockup fields without style mockup are ignored", async () => {
    const image = await decode(
      await postJson("/api/v1/screenshot", { url: fixture("/simple"), frame: "phone", padding: 100, width: 600, height: 400, deviceScaleFactor: 1 }),
    );
    expect([image.bitmap.width, image.bitmap.height]).toEqual([600, 400]);
  });

  it("works with fullPage and with HTML input (no address in the bar)", async () => {
    const res = await postJson("/api/v1/html-to-screenshot", {
      html: '<body style="margin:0"><div style="height:1500px;background:#00ff00"></div></body>',
      style: "mockup",
      fullPage: true,
      width: 500,
      height: 300,
      padding: 30,
      background: "#123456",
      deviceScaleFactor: 1,
    });
    const image = await decode(res);
    expect([image.bitmap.width, image.bitmap.height]).toEqual([560, 1500 + BROWSER_BAR_HEIGHT + 60]);
    // The whole bar is its plain colour: no address pill for HTML.
    const bar = rgb(image, 30 + 250, 30 + 20);
    for (let x = 30 + 100; x < 30 + 400; x += 5) expect(close(rgb(image, x, 30 + 20), bar)).toBe(true);
  });
});

describe("mockup look", () => {
  it("shows a hex background exactly at the corners", async () => {
    const image = await decode(await mockup({ url: fixture("/simple"), background: "#123456", width: 400, height: 300, deviceScaleFactor: 1 }));
    const { width, height } = image.bitmap;
    for (const [x, y] of [
      [1, 1],
      [width - 2, 1],
      [1, height - 2],
      [width - 2, height - 2],
    ] as const)
      expect(rgb(image, x, y)).toEqual(BG);
  });

  it("the default gradient varies across the image", async () => {
    const image = await decode(await mockup({ url: fixture("/simple"), width: 400, height: 300, deviceScaleFactor: 1 }));
    const a = rgb(image, 2, 2);
    const b = rgb(image, image.bitmap.width - 3, image.bitmap.height - 3);
    expect(Math.abs(a.r - b.r) + Math.abs(a.g - b.g) + Math.abs(a.b - b.b)).toBeGreaterThan(80);
  });

  it("rounds the corners: just inside the window's corner is background, not page", async () => {
    const image = await decode(
      await mockup({
        url: fixture("/simple"),
        frame: "none",
        background: "#123456",
        borderRadius: 40,
        padding: 40,
        shadow: false,
        width: 400,
        height: 300,
        deviceScaleFactor: 2,
      }),
    );
    // The window starts at (80, 80) device px; a 40 px radius is 80 device px.
    expect(rgb(image, 80 + 4, 80 + 4)).toEqual(BG);
    expect(rgb(image, 80 + 80, 80 + 80)).toEqual({ r: 255, g: 0, b: 0 });
    expect(rgb(image, 80 + 400, 80 + 2)).toEqual({ r: 255, g: 0, b: 0 });
  });

  it("casts a shadow next to the window and not far from it; shadow: false leaves the background untouched", async () => {
    const body = { url: fixture("/simple"), frame: "none", background: "#aabbcc", padding: 80, width: 400, height: 300, deviceScaleFactor: 1 };
    const withShadow = await decode(await mockup({ ...body, shadow: true }));
    const without = await decode(await mockup({ ...body, shadow: false }));
    const below = [80 + 200, 80 + 300 + 12] as const; // 12 px under the window's bottom edge
    const far = [4, 4] as const;
    const bg = { r: 0xaa, g: 0xbb, b: 0xcc };
    expect(rgb(without, ...below)).toEqual(bg);
    const shaded = rgb(withShadow, ...below);
    expect(shaded.r + shaded.g + shaded.b).toBeLessThan(bg.r + bg.g + bg.b - 60);
    expect(rgb(withShadow, ...far)).toEqual(bg);
  });

  it("shows the page's host in the browser bar", async () => {
    const res = await mockup({ url: fixture("/simple"), frame: "browser", background: "#123456", padding: 20, width: 800, height: 300, deviceScaleFactor: 1 });
    const image = await decode(res);
    // The address pill sits in the middle of the bar: its text is grey ink on white.
    let ink = 0;
    for (let x = 20 + 400 - 90; x < 20 + 400 + 90; x++)
      for (let y = 20 + 12; y < 20 + 30; y++) {
        const { r, g, b } = rgb(image, x, y);
        if (r + g + b < 450) ink++;
      }
    expect(ink).toBeGreaterThan(60);
  });

  it("shows the final URL's host after a redirect, not the one asked for", async () => {
    const port = new URL(fixture("/")).port;
    const bar = async (url: string) => {
      const image = await decode(await mockup({ url, frame: "browser", background: "#123456", padding: 20, width: 800, height: 300, deviceScaleFactor: 1 }));
      return Array.from({ length: 180 * 18 }, (_, i) => rgb(image, 20 + 310 + (i % 180), 20 + 12 + Math.floor(i / 180)).r).join();
    };
    const redirected = await bar(fixture(`/redirect?to=${encodeURIComponent(`http://localhost:${port}/simple`)}`));
    expect(redirected).toBe(await bar(`http://localhost:${port}/simple`));
    expect(redirected).not.toBe(await bar(fixture("/simple")));
  });

  it("named backgrounds: each preset has its own colours at the corners", async () => {
    const corners: Record<string, number[]> = {};
    for (const background of ["ocean", "sunset", "forest", "midnight", "aurora", "slate"]) {
      const image = await decode(await mockup({ url: fixture("/simple"), background, width: 400, height: 300, shadow: false, deviceScaleFactor: 1 }));
      const { r, g, b } = rgb(image, 2, 2);
      corners[background] = [r, g, b];
    }
    // Sky blue for ocean, orange for sunset, green for forest, near black for midnight, pale for aurora and slate.
    expect(corners.ocean![2]).toBeGreaterThan(200);
    expect(corners.sunset![0]).toBeGreaterThan(200);
    expect(corners.forest![1]).toBeGreaterThan(170);
    expect(corners.midnight!.reduce((a, b) => a + b)).toBeLessThan(200);
    expect(Math.min(...corners.aurora!, ...corners.slate!)).toBeGreaterThan(180);
    expect(new Set(Object.values(corners).map(String)).size).toBe(6);
  });

  it("a dark bar with darkMode, a light one without", async () => {
    const dark = await decode(
      await mockup({ url: fixture("/simple"), frame: "browser", darkMode: true, padding: 20, width: 400, height: 200, deviceScaleFactor: 1 }),
    );
    const light = await decode(await mockup({ url: fixture("/simple"), frame: "browser", padding: 20, width: 400, height: 200, deviceScaleFactor: 1 }));
    const lum = ({ r, g, b }: { r: number; g: number; b: number }) => r + g + b;
    expect(lum(rgb(dark, 20 + 100, 20 + 20))).toBeLessThan(200);
    expect(lum(rgb(light, 20 + 100, 20 + 20))).toBeGreaterThan(600);
  });

  it("keeps the capture's sharpness: at 2x the page pixels are exactly those of a plain capture", async () => {
    const size = { width: 400, height: 200, deviceScaleFactor: 2 };
    const plain = await decode(await postJson("/api/v1/screenshot", { url: fixture("/checker"), ...size }));
    const framed = await decode(await mockup({ url: fixture("/checker"), frame: "none", padding: 50, borderRadius: 0, shadow: false, ...size }));
    const row = (image: typeof plain, dx: number, dy: number) => Array.from({ length: 40 }, (_, i) => rgb(image, dx + 100 + i, dy + 150));
    // The black and white stripes come through unchanged: no grey from resampling.
    expect(row(plain, 0, 0).some((p) => p.r === 0)).toBe(true);
    expect(row(framed, 100, 100)).toEqual(row(plain, 0, 0));
  });

  it("answers JPEG with the quality asked for", async () => {
    const low = await mockup({ url: fixture("/tall?h=800"), format: "jpeg", quality: 10, width: 600, height: 400 });
    expect(low.headers.get("content-type")).toBe("image/jpeg");
    const lowBytes = Buffer.from(await low.arrayBuffer());
    expect(lowBytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const high = Buffer.from(await (await mockup({ url: fixture("/tall?h=800"), format: "jpeg", quality: 95, width: 600, height: 400 })).arrayBuffer());
    expect(high.length).toBeGreaterThan(lowBytes.length * 1.5);
    expect((await readImage(high)).bitmap.width).toBe((600 + 128) * 2);
  });

  it("refuses a PDF mockup before rendering anything", async () => {
    const res = await mockup({ url: fixture("/simple"), format: "pdf" });
    expect(res.status).toBe(400);
  });
});
