import { describe, expect, it } from "vitest";
import { MAX_TILE_SIDE, needsTiles, tilesFor } from "../../../lib/render/tiles.js";

describe("tiles", () => {
  it("are needed only past Chromium's one-piece limit, on either side", () => {
    expect(needsTiles({ x: 0, y: 0, width: 400, height: 8192 }, 1)).toBe(false);
    expect(needsTiles({ x: 0, y: 0, width: 400, height: 8193 }, 1)).toBe(true);
    expect(needsTiles({ x: 0, y: 0, width: 1280, height: 4097 }, 2)).toBe(true);
    expect(needsTiles({ x: 0, y: 0, width: 3840, height: 600 }, 3)).toBe(true);
  });

  it.each([1, 2, 2.625, 3])("at %sx cover the area exactly, within the limits, meeting on whole device pixels", (scale) => {
    const area = { x: 0, y: 120.5, width: 3840, height: 20_000 };
    const tiles = tilesFor(area, scale);
    let covered = 0;
    for (const tile of tiles) {
      expect(Math.round(tile.width * scale)).toBeLessThanOrEqual(MAX_TILE_SIDE);
      expect(Math.round(tile.height * scale)).toBeLessThanOrEqual(MAX_TILE_SIDE);
      expect(Math.round(tile.width * scale) * Math.round(tile.height * scale)).toBeLessThanOrEqual(16_000_000);
      // Edges inside the area fall on whole device pixels, so stitched tiles neither overlap nor gap.
      for (const edge of [tile.x - area.x, tile.y - area.y]) expect(Math.abs(edge * scale - Math.round(edge * scale))).toBeLessThan(1e-6);
      covered += tile.width * tile.height;
    }
    expect(covered).toBeCloseTo(area.width * area.height, 3);
    expect(Math.max(...tiles.map((t) => t.y + t.height))).toBeCloseTo(area.y + area.height, 6);
    expect(Math.max(...tiles.map((t) => t.x + t.width))).toBeCloseTo(area.x + area.width, 6);
  });
});
