import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { chromiumFormat, finishImage, PREVIEW_MAX_HEIGHT, PREVIEW_MAX_WIDTH, previewOf, thumbnailSize } from "../../../lib/render/encode.js";

const output = (fields: Partial<Parameters<typeof thumbnailSize>[2]>) => ({ format: "png" as const, quality: 80, ...fields });

describe("thumbnail size", () => {
  it("both sides with cover or contain: exactly that box, enlarged if it must be", () => {
    expect(thumbnailSize(2560, 1600, output({ imageWidth: 1200, imageHeight: 630 }))).toEqual({ width: 1200, height: 630 });
    expect(thumbnailSize(2560, 1600, output({ imageWidth: 1200, imageHeight: 630, fit: "contain" }))).toEqual({ width: 1200, height: 630 });
    expect(thumbnailSize(300, 200, output({ imageWidth: 600, imageHeight: 600, fit: "cover" }))).toEqual({ width: 600, height: 600 });
  });

  it("one side, or inside: the capture's aspect within the box, never enlarged", () => {
    expect(thumbnailSize(2560, 1600, output({ imageWidth: 640 }))).toEqual({ width: 640, height: 400 });
    expect(thumbnailSize(2560, 1600, output({ imageHeight: 100 }))).toEqual({ width: 160, height: 100 });
    expect(thumbnailSize(2560, 1600, output({ imageWidth: 1200, imageHeight: 630, fit: "inside" }))).toEqual({ width: 1008, height: 630 });
    expect(thumbnailSize(800, 600, output({ imageWidth: 4000 }))).toEqual({ width: 800, height: 600 });
    expect(thumbnailSize(800, 600, output({ imageWidth: 4000, imageHeight: 4000, fit: "inside" }))).toEqual({ width: 800, height: 600 });
  });

  it("a sliver of a page keeps at least one pixel a side", () => {
    expect(thumbnailSize(400, 40_000, output({ imageHeight: 10 }))).toEqual({ width: 1, height: 10 });
  });
});

describe("finishing an image", () => {
  const red = () => sharp({ create: { width: 400, height: 300, channels: 4, background: "#ff0000" } });

  it("asks Chromium for lossless PNG when sharp still has work, the format itself otherwise", () => {
    expect(chromiumFormat(output({ format: "webp" }))).toBe("webp");
    expect(chromiumFormat(output({ format: "jpeg", imageWidth: 100 }))).toBe("png");
    expect(chromiumFormat(output({ format: "avif" }))).toBe("png");
  });

  it("returns Chromium's image untouched when nothing is left to do", async () => {
    const png = await red().png().toBuffer();
    expect(await finishImage(png, output({}))).toBe(png);
  });

  it("resizes a stitched canvas after it is composed (sharp would otherwise resize the empty canvas first)", async () => {
    const canvas = sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).composite([
      { input: await red().png().toBuffer(), left: 0, top: 0 },
    ]);
    const thumb = await finishImage(canvas, output({ imageWidth: 100 }));
    const { data, info } = await sharp(thumb).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([100, 75]);
    expect([...data.subarray(0, 4)]).toEqual([255, 0, 0, 255]);
  });

  it("contain letterboxes transparent, or white in JPEG", async () => {
    const png = await red().png().toBuffer();
    for (const [format, corner] of [
      ["png", [0, 0, 0, 0]],
      ["jpeg", [255, 255, 255]],
    ] as const) {
      const thumb = await finishImage(png, output({ format, imageWidth: 200, imageHeight: 300, fit: "contain" }));
      const { data, info } = await sharp(thumb).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([200, 300]);
      expect([...data.subarray(0, info.channels)]).toEqual(corner);
    }
  });
});

describe("the MCP preview", () => {
  const png = (width: number, height: number, alpha = 1) =>
    sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 255, alpha } } })
      .png()
      .toBuffer();
  const sizeOf = async (data: Buffer) => {
    const { format, width, height } = await sharp(data).metadata();
    return [format, width, height];
  };

  it.each([
    ["a wide capture is scaled to the limit", 2560, 1600, [PREVIEW_MAX_WIDTH, 640]],
    ["a small one is never enlarged", 400, 300, [400, 300]],
    ["a tall page keeps its top, scaled", 2048, 10_000, [PREVIEW_MAX_WIDTH, PREVIEW_MAX_HEIGHT]],
    ["a narrow tall one is cut, not squeezed", 800, 5000, [800, PREVIEW_MAX_HEIGHT]],
  ])(
    "%s",
    async (_, width, height, expected) => {
      const preview = await previewOf(await png(width, height), width, height);
      expect(await sizeOf(preview.data)).toEqual(["jpeg", ...expected]);
      expect([preview.width, preview.height]).toEqual(expected);
    },
    // A 20 Mpx PNG made and scaled: ~1 s here, several on a busy machine.
    30_000,
  );

  it("flattens transparency on white", async () => {
    const preview = await previewOf(await png(100, 100, 0), 100, 100);
    const { data } = await sharp(preview.data).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)].every((v) => v > 250)).toBe(true);
  });
});
