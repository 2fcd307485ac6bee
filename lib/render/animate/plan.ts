// Where the page stands in each frame of an animation (docs/api.md, "Animate"): the top for
// `holdStart`, then eased to the scroll target, held there for `holdEnd`, and with `back` eased back
// to the top. Frame i shows the moment i / fps; the first frame is the top, the last the target (the
// top again with `back`). Pure: the same request gives the same frames.

export type Easing = "linear" | "ease-in" | "ease-out" | "ease-in-out";

/** The curves CSS names these easings by (cubic-bezier control points x1, y1, x2, y2). */
const CURVES: Record<Easing, readonly [number, number, number, number]> = {
  linear: [0, 0, 1, 1],
  "ease-in": [0.42, 0, 1, 1],
  "ease-out": [0, 0, 0.58, 1],
  "ease-in-out": [0.42, 0, 0.58, 1],
};

/** A cubic Bézier's coordinate at parameter t, with end points 0 and 1 and control values a, b. */
const bezier = (t: number, a: number, b: number) => 3 * a * t * (1 - t) ** 2 + 3 * b * t ** 2 * (1 - t) + t ** 3;

/** The eased progress at time share x (0 to 1), as CSS's cubic-bezier() computes it: y where the curve's x is x. */
export function eased(easing: Easing, x: number): number {
  const [x1, y1, x2, y2] = CURVES[easing];
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  // x(t) rises monotonically on [0, 1] for control x values within [0, 1]: bisection finds t.
  let low = 0;
  let high = 1;
  for (let i = 0; i < 40; i++) {
    const mid = (low + high) / 2;
    if (bezier(mid, x1, x2) < x) low = mid;
    else high = mid;
  }
  return bezier((low + high) / 2, y1, y2);
}

export interface FramePlan {
  /** Frames in all: duration x fps, rounded. */
  readonly frames: number;
  readonly fps: number;
  readonly easing: Easing;
  readonly holdStartMs: number;
  readonly holdEndMs: number;
  readonly back: boolean;
}

/** Frames of `duration` seconds at `fps`: at least one. */
export const frameCount = (durationSeconds: number, fps: number) => Math.max(1, Math.round(durationSeconds * fps));

/**
 * Each frame's scroll position, in device px from the top, towards `target` (device px). Frame i is
 * the moment i / fps; the moves fill the time the holds leave, with `back` split evenly between
 * going and coming back.
 */
export function scrollPositions(plan: FramePlan, target: number): number[] {
  const last = ((plan.frames - 1) * 1000) / plan.fps;
  const moving = Math.max(0, last - plan.holdStartMs - plan.holdEndMs);
  const going = plan.back ? moving / 2 : moving;
  const share = (elapsed: number, span: number) => (span <= 0 ? (elapsed >= 0 ? 1 : 0) : Math.min(1, Math.max(0, elapsed / span)));
  return Array.from({ length: plan.frames }, (_, i) => {
    if (plan.frames === 1) return 0;
    const t = (i * 1000) / plan.fps;
    const returnsAt = plan.holdStartMs + going + plan.holdEndMs;
    const progress = plan.back && t > returnsAt ? 1 - eased(plan.easing, share(t - returnsAt, going)) : eased(plan.easing, share(t - plan.holdStartMs, going));
    return Math.round(progress * target);
  });
}
