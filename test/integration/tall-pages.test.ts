// Captures past Chromium's one-piece limit (8,192 device px a side): every band of a 20,000 px page
// at its place at 1x, 2x and 3x, the fixed header once at the top, and a 3840 px wide page at 3x.
import sharp from "sharp";
import { describe, expect, inject, it } from "vitest";
import { BAND_COLOURS } from "../../dev/harness/fixtures.js";
import { postJson } from "../helpers/api.js";

const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));

async function pixels(res: Response) {
  expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
  const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()), { limitInputPixels: false })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => {
    const offset = (Math.round(y) * info.width + Math.round(x)) * info.channels;
    return [data[offset]!, data[offset + 1]!, data[offset + 2]!];
  };
  return { width: info.width, height: info.height, at };
}

/** Within `tolerance` of `colour` on every channel (JPEG allows some). */
const near = (pixel: number[], colour: string, tolerance = 6) => hex(colour).every((value, i) => Math.abs(value - pixel[i]!) <= tolerance);

describe("a 20,000 px page, full page", () => {
  it.each([1, 2, 3])("at %ix: every band at its place, on both sides of every tile edge, the fixed header once", async (scale) => {
    const res = await postJson("/api/v1/screenshot", { url: `${inject("fixtureUrl")}/bands?n=20`, width: 400, deviceScaleFactor: scale, fullPage: true });
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([400 * scale, 20_000 * scale]);
    const wrong: string[] = [];
    for (let band = 0; band < 20; band++) {
      // Rows through the band (below the number's glyphs), and each band's first and last rows (tile edges fall inside bands at 2x and 3x).
      for (const y of [band * 1000 + 300, band * 1000 + 700, band * 1000 + 999, band * 1000 + (band === 0 ? 41 : 1)]) {
        for (const x of [5, 390]) if (!near(image.at(x * scale, y * scale), BAND_COLOURS[band]!)) wrong.push(`band ${band + 1} at (${x}, ${y})`);
      }
    }
    expect(wrong).toEqual([]);
    expect(near(image.at(200 * scale, 20 * scale), "#111111"), "the fixed header at the top").toBe(true);
  });

  it("as JPEG at 2x too", async () => {
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/bands?n=20`,
      width: 400,
      deviceScaleFactor: 2,
      fullPage: true,
      format: "jpeg",
    });
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([800, 40_000]);
    for (let band = 0; band < 20; band++) expect(near(image.at(400, (band * 1000 + 500) * 2), BAND_COLOURS[band]!, 12), `band ${band + 1}`).toBe(true);
  });
});

describe("WebP and AVIF (at most 16,383 px tall)", () => {
  it.each(["webp", "avif"])("%s: a 20,000 px page at 1x is cut at 16,383 px, marked truncated, every band up to there at its place", async (format) => {
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/bands?n=20`,
      width: 400,
      deviceScaleFactor: 1,
      fullPage: true,
      format,
      quality: 90,
    });
    expect(res.headers.get("x-truncated")).toBe("true");
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([400, 16_383]);
    for (let band = 0; band < 16; band++) expect(near(image.at(200, band * 1000 + 500), BAND_COLOURS[band]!, 12), `band ${band + 1}`).toBe(true);
  });
});

describe("mockups past the limit", () => {
  it.each([1, 2])("a full-page browser mockup of the 20,000 px page at %ix: every band at its place, the header once", async (scale) => {
    const padding = 20;
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/bands?n=20`,
      width: 400,
      deviceScaleFactor: scale,
      fullPage: true,
      style: "mockup",
      padding,
      background: "#123456",
      shadow: false,
    });
    const image = await pixels(res);
    const top = padding + 40; // the browser bar
    expect([image.width, image.height]).toEqual([(400 + 2 * padding) * scale, (20_000 + 40 + 2 * padding) * scale]);
    const wrong: string[] = [];
    for (let band = 0; band < 20; band++) {
      for (const y of [band * 1000 + 300, band * 1000 + 990, band * 1000 + (band === 0 ? 50 : 10)]) {
        for (const x of [8, 390])
          if (!near(image.at((padding + x) * scale, (top + y) * scale), BAND_COLOURS[band]!)) wrong.push(`band ${band + 1} at (${x}, ${y})`);
      }
    }
    expect(wrong).toEqual([]);
    expect(near(image.at((padding + 200) * scale, (top + 20) * scale), "#111111"), "the fixed header at the top").toBe(true);
    expect(near(image.at(5 * scale, image.height - 5 * scale), "#123456"), "the background below").toBe(true);
  });
});

describe("a 3840 px wide page at 3x (11,520 device px)", () => {
  it("keeps every column at its place", async () => {
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/columns?w=3840`,
      width: 3840,
      height: 600,
      deviceScaleFactor: 3,
      fullPage: true,
    });
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([11_520, 6000]);
    for (let column = 0; column < 4; column++) {
      for (const y of [10, 3000, 5990]) expect(near(image.at((column * 960 + 480) * 3, y), BAND_COLOURS[column]!), `column ${column + 1} at ${y}`).toBe(true);
    }
  });

  it("a scrolled viewport: where the page is scrolled to, its fixed header where it shows", async () => {
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/bands?n=20`,
      width: 3840,
      height: 600,
      deviceScaleFactor: 3,
      js: "scrollTo(0, 5000)",
    });
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([11_520, 1800]);
    expect(near(image.at(100 * 3, 20 * 3), "#111111"), "the fixed header").toBe(true);
    for (const x of [100, 3000, 3830]) expect(near(image.at(x * 3, 300 * 3), BAND_COLOURS[5]!), `band 6 at ${x}`).toBe(true);
    expect(near(image.at(100 * 3, 599 * 3), BAND_COLOURS[5]!)).toBe(true);
  });

  it("the viewport alone too (no fullPage)", async () => {
    const res = await postJson("/api/v1/screenshot", { url: `${inject("fixtureUrl")}/columns?w=3840`, width: 3840, height: 600, deviceScaleFactor: 3 });
    const image = await pixels(res);
    expect([image.width, image.height]).toEqual([11_520, 1800]);
    for (let column = 0; column < 4; column++) {
      for (const x of [column * 960 + 10, column * 960 + 480, column * 960 + 950]) {
        expect(near(image.at(x * 3, 900), BAND_COLOURS[column]!), `column ${column + 1} at ${x}`).toBe(true);
      }
    }
  });
});
