import { describe, expect, it } from "vitest";
import { DEFAULT_WIDTH, PHONE_VIEWPORT, userAgentFor, viewportFor } from "../../../lib/render/viewport.js";

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

  it("renders a tablet mockup without width as an iPad (820 x 1180, mobile, its user agent); with a width, in its proportions", () => {
    expect(viewportFor({ ...base, style: "mockup", frame: "tablet" })).toEqual({
      width: 820,
      height: 1180,
      deviceScaleFactor: 2,
      mobile: true,
      device: "ipad",
    });
    expect(viewportFor({ ...base, style: "mockup", frame: "tablet", width: 1000 })).toEqual({ width: 1000, height: 1439, deviceScaleFactor: 2, mobile: false });
    expect(viewportFor({ ...base, style: "mockup", frame: "laptop" })).toEqual({ width: 1280, height: 800, deviceScaleFactor: 2, mobile: false });
  });

  it("ignores the phone frame when the request is not a mockup", () => {
    expect(viewportFor({ ...base, frame: "phone" })).toMatchObject({ width: 1280, height: 800, mobile: false });
  });

  it("gives a device preset's size, scale and emulation; the request's own fields win", () => {
    expect(viewportFor({ height: null, frame: "browser", device: "iphone-15" })).toEqual({
      width: 393,
      height: 852,
      deviceScaleFactor: 3,
      mobile: true,
      device: "iphone-15",
    });
    expect(viewportFor({ height: null, frame: "browser", device: "pixel-8" })).toMatchObject({ width: 412, height: 915, deviceScaleFactor: 2.625 });
    expect(viewportFor({ height: null, frame: "browser", device: "ipad", deviceScaleFactor: 1 })).toMatchObject({
      width: 820,
      height: 1180,
      deviceScaleFactor: 1,
    });
    // A width of its own keeps the device's proportions.
    expect(viewportFor({ height: null, frame: "browser", device: "desktop-hd", width: 960 })).toMatchObject({ width: 960, height: 540, mobile: false });
    expect(viewportFor({ height: null, frame: "browser" }).deviceScaleFactor).toBe(2);
  });

  it("sends the request's user agent, else the device's, else the browser's own as desktop or phone", () => {
    const agents = { desktop: "Desktop Chrome", mobile: "Android Chrome" };
    const iphone = viewportFor({ height: null, frame: "browser", device: "iphone-15" });
    expect(userAgentFor(iphone, agents)).toMatch(/^Mozilla\/5\.0 \(iPhone; CPU iPhone OS/);
    expect(userAgentFor(iphone, agents, "Mine/1")).toBe("Mine/1");
    expect(userAgentFor(viewportFor({ height: null, frame: "browser", device: "pixel-8" }), agents)).toBe("Android Chrome");
    expect(userAgentFor(viewportFor({ height: null, frame: "browser" }), agents)).toBe("Desktop Chrome");
    expect(userAgentFor(viewportFor({ height: null, frame: "phone", style: "mockup" }), agents)).toBe("Android Chrome");
  });
});
