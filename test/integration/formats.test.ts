// WebP (Chromium encodes it) and AVIF (sharp, after capture): right signature and header, the same
// pixels as the PNG of the same page within a tolerance, in mockups too, transparent with omitBackground.
import sharp from "sharp";
import { describe, expect, inject, it } from "vitest";
import { BAND_COLOURS } from "../../dev/harness/fixtures.js";
import { postJson } from "../helpers/api.js";

// A page of four flat colour blocks, so lossy formats keep each block's colour.
const HTML = `<body style="margin:0;display:grid;grid-template-columns:1fr 1fr;height:100vh">
<div style="background:#e6194b"></div><div style="background:#3cb44b"></div><div style="background:#4363d8"></div><div style="background:#ffe119"></div></body>`;
const render = (fields: Record<string, unknown>) =>
  postJson("/api/v1/html-to-screenshot", { html: HTML, width: 400, height: 300, deviceScaleFactor: 2, ...fields });

async function decoded(res: Response) {
  expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
  const body = Buffer.from(await res.arrayBuffer());
  const { data, info } = await sharp(body, { limitInputPixels: false }).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x + 1) * info.channels)];
  return { body, width: info.width, height: info.height, channels: info.channels, at };
}

describe("image formats", () => {
  it.each([
    ["webp", "image/webp", (b: Buffer) => b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP"],
    ["avif", "image/avif", (b: Buffer) => b.toString("latin1", 4, 12) === "ftypavif"],
  ] as const)("%s: its signature, its content type, and the PNG's pixels within a tolerance", async (format, type, signed) => {
    const png = await decoded(await render({}));
    const res = await render({ format, quality: 90 });
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="screenshot.${format}"`);
    const image = await decoded(res);
    expect(signed(image.body)).toBe(true);
    expect([image.width, image.height]).toEqual([800, 600]);
    for (const [x, y] of [
      [200, 150],
      [600, 150],
      [200, 450],
      [600, 450],
      [10, 10],
      [790, 590],
    ] as const) {
      const difference = Math.max(...[0, 1, 2].map((i) => Math.abs(image.at(x, y)[i]! - png.at(x, y)[i]!)));
      expect(difference, `(${x}, ${y})`).toBeLessThanOrEqual(12);
    }
  });

  it("the JSON envelope reports WebP and AVIF outputs' pixels, read from the files", async () => {
    for (const format of ["webp", "avif"]) {
      const res = await render({ format, responseFormat: "json", style: "mockup", padding: 20 });
      expect(res.status).toBe(200);
      const json = (await res.json()) as { width: number; height: number; format: string; image: string };
      const meta = await sharp(Buffer.from(json.image, "base64")).metadata();
      expect([json.width, json.height, json.format]).toEqual([meta.width, meta.height, format]);
      // The mockup's padding and browser bar around the 800x600 capture.
      expect([meta.width, meta.height]).toEqual([(400 + 40) * 2, (300 + 40 + 40) * 2]);
      expect(meta.format).toBe(format === "avif" ? "heif" : "webp");
    }
  });

  it.each(["webp", "avif"])("%s with omitBackground keeps transparency", async (format) => {
    const res = await postJson("/api/v1/html-to-screenshot", {
      html: "<div style='width:100px;height:100px;background:#4363d8'></div>",
      width: 400,
      height: 200,
      deviceScaleFactor: 1,
      format,
      omitBackground: true,
    });
    const image = await decoded(res);
    expect(image.channels).toBe(4);
    expect(image.at(350, 150)[3], "transparent outside the box").toBeLessThan(10);
    expect(image.at(50, 50)[3], "opaque inside").toBeGreaterThan(245);
  });
});

// The four-block page is 800x600 at 2x: red | green over blue | yellow.
const RED = [0xe6, 0x19, 0x4b];
const GREEN = [0x3c, 0xb4, 0x4b];
const BLUE = [0x43, 0x63, 0xd8];
const close = (pixel: number[], colour: number[], tolerance = 12) => colour.every((value, i) => Math.abs(value - pixel[i]!) <= tolerance);

describe("thumbnails (imageWidth / imageHeight / fit)", () => {
  it("cover: exactly the box, cropped from the top; the JSON envelope reports the thumbnail's pixels", async () => {
    const res = await render({ imageWidth: 200, imageHeight: 100, responseFormat: "json" });
    const json = (await res.json()) as { width: number; height: number; image: string };
    expect([json.width, json.height]).toEqual([200, 100]);
    const image = await decoded(new Response(Buffer.from(json.image, "base64")));
    expect([image.width, image.height]).toEqual([200, 100]);
    // Scaled by 1/4 to 200x150, then the top 100 rows kept: red | green down to row 75, blue below.
    // (Cropped from the middle, row 60 would be blue.)
    expect(close(image.at(50, 60), RED)).toBe(true);
    expect(close(image.at(150, 60), GREEN)).toBe(true);
    expect(close(image.at(50, 95), BLUE)).toBe(true);
  });

  it("contain: the whole capture in the box, letterboxed transparent; inside: the capture's aspect, no bars", async () => {
    const contained = await decoded(await render({ imageWidth: 200, imageHeight: 300, fit: "contain" }));
    expect([contained.width, contained.height]).toEqual([200, 300]);
    expect(contained.at(100, 10)[3], "the bar above").toBe(0);
    expect(close(contained.at(50, 100), RED) && close(contained.at(50, 200), BLUE)).toBe(true);
    const inside = await decoded(await render({ imageWidth: 200, imageHeight: 300, fit: "inside" }));
    expect([inside.width, inside.height]).toEqual([200, 150]);
  });

  it("one side keeps the aspect and never enlarges", async () => {
    const half = await decoded(await render({ imageHeight: 300, format: "webp" }));
    expect([half.width, half.height]).toEqual([400, 300]);
    const same = await decoded(await render({ imageWidth: 5000 }));
    expect([same.width, same.height]).toEqual([800, 600]);
  });

  it("downscales with a real filter: fine stripes become their average, not one of their colours", async () => {
    // 1 px black and white columns at 1x, a quarter of them kept by a naive (nearest) resize.
    const stripes = "<body style='margin:0;height:100vh;background:repeating-linear-gradient(90deg,#000 0 1px,#fff 1px 2px)'></body>";
    const res = await postJson("/api/v1/html-to-screenshot", { html: stripes, width: 400, height: 200, deviceScaleFactor: 1, imageWidth: 100 });
    const image = await decoded(res);
    expect([image.width, image.height]).toEqual([100, 50]);
    for (const x of [10, 37, 50, 83]) {
      expect(image.at(x, 25)[0]).toBeGreaterThan(90);
      expect(image.at(x, 25)[0]).toBeLessThan(165);
    }
  });

  it("a mockup's thumbnail, as AVIF", async () => {
    const res = await render({ style: "mockup", padding: 20, format: "avif", imageWidth: 440, responseFormat: "json" });
    const json = (await res.json()) as { width: number; height: number; format: string };
    // The 880x760 mockup at half its size.
    expect([json.width, json.height, json.format]).toEqual([440, 380, "avif"]);
  });

  it("a tiled 20,000 px page at 2x, made a thumbnail after the tiles are stitched: every band at its place", async () => {
    const res = await postJson("/api/v1/screenshot", {
      url: `${inject("fixtureUrl")}/bands?n=20`,
      width: 400,
      deviceScaleFactor: 2,
      fullPage: true,
      imageWidth: 100,
      format: "jpeg",
    });
    const image = await decoded(res);
    expect([image.width, image.height]).toEqual([100, 5000]);
    const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));
    for (let band = 0; band < 20; band++) expect(close(image.at(5, band * 250 + 200), hex(BAND_COLOURS[band]!)), `band ${band + 1}`).toBe(true);
  });
});
