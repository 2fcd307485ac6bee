import { describe, expect, it } from "vitest";
import { MAX_CAPTURE_HEIGHT, MAX_OUTPUT_PIXELS, maxCaptureHeight, outputPixels } from "../../../lib/render/limits.js";
import { viewportFor } from "../../../lib/render/viewport.js";

const at = (width: number, deviceScaleFactor: number) => viewportFor({ width, height: null, deviceScaleFactor, frame: "browser" });

describe("output limits", () => {
  it("counts device pixels, a mockup twice", () => {
    expect(outputPixels(at(1280, 2), 800, false)).toBe(2560 * 1600);
    expect(outputPixels(at(1280, 2), 800, true)).toBe(2 * 2560 * 1600);
  });

  it("lets an ordinary full page run to the 20,000 CSS px cut", () => {
    expect(maxCaptureHeight(at(1280, 1), false)).toBe(MAX_CAPTURE_HEIGHT);
  });

  it("cuts a wide, dense full page where it would pass the pixel cap (3840 px at 3x: 2,893 CSS px, not 20,000)", () => {
    const height = maxCaptureHeight(at(3840, 3), false);
    expect(height).toBe(2893);
    expect(outputPixels(at(3840, 3), height, false)).toBeLessThanOrEqual(MAX_OUTPUT_PIXELS);
    expect(outputPixels(at(3840, 3), height + 1, false)).toBeGreaterThan(MAX_OUTPUT_PIXELS);
    expect(maxCaptureHeight(at(3840, 3), true)).toBe(Math.floor(height / 2));
  });
});
