import { describe, expect, it } from "vitest";
import { BROWSER_BAR_HEIGHT, mockupHtml, mockupLayout, PHONE_BEZEL, PHONE_STATUS_BAR } from "../../../../lib/render/mockup/mockup.js";

describe("mockupLayout", () => {
  it("adds the browser bar above the capture, and padding on every side", () => {
    expect(mockupLayout(1280, 800, { frame: "browser", padding: 64 })).toEqual({
      windowWidth: 1280,
      windowHeight: 800 + BROWSER_BAR_HEIGHT,
      width: 1280 + 128,
      height: 800 + BROWSER_BAR_HEIGHT + 128,
    });
  });

  it("wraps a phone capture in its bezel and status bar", () => {
    expect(mockupLayout(390, 844, { frame: "phone", padding: 0 })).toEqual({
      windowWidth: 390 + 2 * PHONE_BEZEL,
      windowHeight: 844 + 2 * PHONE_BEZEL + PHONE_STATUS_BAR,
      width: 390 + 2 * PHONE_BEZEL,
      height: 844 + 2 * PHONE_BEZEL + PHONE_STATUS_BAR,
    });
  });

  it("adds nothing but padding without a frame", () => {
    expect(mockupLayout(400, 300, { frame: "none", padding: 10 })).toEqual({ windowWidth: 400, windowHeight: 300, width: 420, height: 320 });
  });
});

describe("mockupHtml", () => {
  const options = {
    background: "#112233",
    padding: 8,
    borderRadius: 12,
    shadow: true,
    frame: "browser",
    darkMode: false,
    format: "png",
    quality: 80,
    deviceScaleFactor: 1,
    omitBackground: false,
  } as const;

  it("shows the page's host in the address bar, escaped (a hostile host cannot inject markup)", () => {
    const html = mockupHtml("data:image/png;base64,AA==", 100, 100, { ...options, host: 'evil.test"><script>alert(1)</script>' });
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("evil.test&#34;&#62;&#60;script&#62;");
  });

  it("uses the requested solid background", () => {
    expect(mockupHtml("data:image/png;base64,AA==", 100, 100, { ...options, host: null })).toContain("#112233");
  });
});
