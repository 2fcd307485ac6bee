import { describe, expect, it } from "vitest";
import { ANIMATION_MEMORY_BYTES, animationRefusal } from "../../../lib/render/animate/animate.js";
import { frameDelays } from "../../../lib/render/animate/images.js";
import { type Easing, eased, scrollPositions } from "../../../lib/render/animate/plan.js";

const plan = (frames: number, fps: number, more: Partial<{ easing: Easing; holdStartMs: number; holdEndMs: number; back: boolean }> = {}) => ({
  frames,
  fps,
  easing: "linear" as Easing,
  holdStartMs: 0,
  holdEndMs: 0,
  back: false,
  ...more,
});

describe("easing", () => {
  it("follows CSS's cubic-bezier curves (values as browsers compute them)", () => {
    expect(eased("linear", 0.3)).toBeCloseTo(0.3, 6);
    // ease-in-out is symmetric about the middle; ease-in lags and ease-out leads by the same amount.
    expect(eased("ease-in-out", 0.5)).toBeCloseTo(0.5, 6);
    expect(eased("ease-in", 0.5)).toBeCloseTo(0.3153, 3);
    expect(eased("ease-out", 0.5)).toBeCloseTo(0.6847, 3);
    expect(eased("ease-in-out", 0.25)).toBeCloseTo(0.1291, 3);
    for (const easing of ["linear", "ease-in", "ease-out", "ease-in-out"] as const) {
      expect(eased(easing, 0)).toBe(0);
      expect(eased(easing, 1)).toBe(1);
      const steps = Array.from({ length: 101 }, (_, i) => eased(easing, i / 100));
      expect(steps.every((value, i) => i === 0 || value >= steps[i - 1]!)).toBe(true);
    }
  });
});

describe("scroll positions", () => {
  it("start at the top and end at the target, every frame in between eased", () => {
    const tops = scrollPositions(plan(11, 10), 1000);
    expect(tops).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    const easedTops = scrollPositions(plan(11, 10, { easing: "ease-in" }), 1000);
    expect(easedTops[0]).toBe(0);
    expect(easedTops[10]).toBe(1000);
    expect(easedTops[5]).toBe(Math.round(eased("ease-in", 0.5) * 1000));
  });

  it("hold at the top and at the target for the times asked, inside the duration", () => {
    // 2 s at 10 fps: the last frame is at 1.9 s; 0.5 s held at each end leaves 0.9 s of scrolling.
    const tops = scrollPositions(plan(20, 10, { holdStartMs: 500, holdEndMs: 500 }), 900);
    expect(tops.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(tops.slice(14)).toEqual([900, 900, 900, 900, 900, 900]);
    expect(tops.slice(5, 15)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
  });

  it("with back, go to the target, hold, and come back to the top by the last frame", () => {
    const tops = scrollPositions(plan(21, 10, { back: true, holdEndMs: 400 }), 800);
    expect(tops[0]).toBe(0);
    expect(tops[8]).toBe(800);
    expect(tops.slice(8, 13)).toEqual([800, 800, 800, 800, 800]);
    expect(tops[20]).toBe(0);
    expect(tops.slice(12)).toEqual([800, 700, 600, 500, 400, 300, 200, 100, 0]);
  });

  it("a page with nowhere to scroll, or one frame, stays at the top", () => {
    expect(scrollPositions(plan(30, 30), 0)).toEqual(Array(30).fill(0));
    expect(scrollPositions(plan(1, 1), 500)).toEqual([0]);
  });
});

describe("frame delays", () => {
  it("GIF's hundredths add up to the whole duration however the frames round", () => {
    for (const [frames, fps] of [
      [60, 12],
      [150, 30],
      [7, 3],
    ] as const) {
      const delays = frameDelays(frames, fps, "gif");
      expect(delays.every((d) => d % 10 === 0 && d > 0)).toBe(true);
      expect(delays.reduce((a, b) => a + b, 0)).toBe(Math.round((frames * 1000) / fps / 10) * 10);
    }
    const webp = frameDelays(60, 12, "webp");
    expect(webp.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(Math.max(...webp) - Math.min(...webp)).toBeLessThanOrEqual(1);
  });
});

describe("an animation's memory, checked before it runs", () => {
  const at720 = { width: 1280, height: 720, deviceScaleFactor: 1, mobile: false };
  const ask = (format: "gif" | "webp" | "mp4" | "webm", duration: number, fps: number, mode: "synthetic" | "live" = "synthetic") =>
    animationRefusal({ format, duration, fps, mode }, at720, "job");

  it("refuses a job's GIF or WebP whose frames would not fit the function beside Chromium, naming the memory and the limit", () => {
    // 30 s at 50 fps, 1280x720: 5.5 GB of RGBA kept as frames, where the worker has 2,048 MB.
    for (const format of ["gif", "webp"] as const) {
      const refusal = ask(format, 30, 50);
      expect(refusal).toMatch(new RegExp(`1500 frames of 1280x720 as ${format} need about [\\d,]+ MB to encode, more than the 768 MB`));
      expect(ask(format, 30, 50, "live")).toMatch(/MB to encode/);
    }
    expect(ANIMATION_MEMORY_BYTES).toBe(768 * 1024 * 1024);
  });

  it("takes what fits: the same as a video (a frame at a time), a 5 s GIF at 30 fps, a 5 s WebP at its default 12", () => {
    expect(ask("mp4", 30, 50)).toBeNull();
    expect(ask("webm", 10, 30, "live")).toBeNull();
    expect(ask("gif", 5, 30)).toBeNull();
    expect(ask("webp", 5, 12)).toBeNull();
    // The largest accepted at 720p, and one frame more refused.
    const largest = (format: "gif" | "webp", mode: "synthetic" | "live") => {
      let frames = 1;
      while (animationRefusal({ format, duration: (frames + 1) / 10, fps: 10, mode }, at720, "job") === null) frames++;
      return frames;
    };
    expect(largest("gif", "synthetic")).toBe(280);
    expect(largest("webp", "synthetic")).toBe(436);
    expect(largest("gif", "live")).toBe(73);
    // A live WebP keeps two frames (written a frame at a time): its bound is the work's time.
    expect(largest("webp", "live")).toBe(294);
  });
});
