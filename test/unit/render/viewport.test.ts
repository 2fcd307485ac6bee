import { describe, expect, it } from "vitest";
import { DEFAULT_WIDTH, PHONE_VIEWPORT, viewportFor } from "../../../lib/render/viewport.js";

const base = { height: null, deviceScaleFactor: 2, frame: "browser" } as const;

describe("viewportFor", () => {
  it("defaults to 1280 wide and 16:10 (1280 x 800), at the requested scale", () => {
    expect(viewportFor(base)).toEqual({ width: DEFAULT_WIDTH, height: 800, deviceScaleFactor: 2, mobile: false });
  });

  it("derives the height from the width as round(width * 10 / 16)", () => {
    expect(viewportFor({ ...base, width: 333 }).height).toBe(208); // 208.125
    expect(viewportFor({ ...base, width: 3840 }).height).toBe(2400);
  });

  it("keeps an explicit height whatever the width", () => {
    expect(viewportFor({ ...base, width: 320, height: 16384 })).toMatchObject({ width: 320, height: 16384 });
  });

  it("renders a phone mockup without width as a phone: 390 x 844, mobile emulation", () => {
    expect(viewportFor({ ...base, style: "mockup", frame: "phone" })).toEqual({ ...PHONE_VIEWPORT, deviceScaleFactor: 2, mobile: true });
  });

  it("gives a phone mockup with a width a phone's proportions, without mobile emulation", () => {
    expect(viewportFor({ ...base, style: "mockup", frame: "phone", width: 780 })).toEqual({ width: 780, height: 1688, deviceScaleFactor: 2, mobile: false });
  });

  it("ignores the phone frame when the request is not a mockup", () => {
    expect(viewportFor({ ...base, frame: "phone" })).toMatchObject({ width: 1280, height: 800, mobile: false });
  });
});
