// WebP (Chromium encodes it) and AVIF (sharp, after capture): right signature and header, the same
// pixels as the PNG of the same page within a tolerance, in mockups too, transparent with omitBackground.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { postJson } from "../helpers/api.js";

// A page of four flat colour blocks, so lossy formats keep each block's colour.
const HTML = `<body style="margin:0;display:grid;grid-template-columns:1fr 1fr;height:100vh">
<div style="background:#e6194b"></div><div style="background:#3cb44b"></div><div style="background:#4363d8"></div><div style="background:#ffe119"></div></body>`;
const render = (fields: Record<string, unknown>) =>
  postJson("/api/v1/html-to-screenshot", { html: HTML, width: 400, height: 300, deviceScaleFactor: 2, ...fields });

async function decoded(res: Response) {
  expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
  const body = Buffer.from(await res.arrayBuffer());
  const { data, info } = await sharp(body).raw().toBuffer({ resolveWithObject: true });
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
