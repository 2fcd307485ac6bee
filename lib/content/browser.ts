import type { Deadline } from "../deadline.js";
import { scriptsDrawn } from "../metadata/rendered.js";
import { type Capture, captureSettled, withSettledPage } from "../render/capture.js";
import type { CaptureOptions, RenderSource } from "../render/options.js";
import { HIDDEN_MARK } from "./visible.js";

// The content's browser path: the page loaded and settled through render's pipeline with the
// request's page controls (as a screenshot of it would be), its DOM read after its scripts ran, with
// what its computed styles hide marked for lib/content/visible.ts; for a snapshot, the capture of
// that same page load.

/** Elements whose style MARK_HIDDEN reads at most (a hostile page may hold millions). */
const MARK_LIMIT = 50_000;

/**
 * Marks with HIDDEN_MARK every element a reader cannot see by its computed style (display,
 * visibility, opacity, font size 0, a zero box that clips its text, far off-screen, text in its
 * background's colour). A string, as LoadedPage.evaluate takes scripts.
 */
const MARK_HIDDEN = `(() => {
  const all = document.body ? Array.from(document.body.querySelectorAll("*")).slice(0, ${MARK_LIMIT}) : [];
  const width = window.innerWidth;
  for (const element of all) {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    const clipped = style.overflow === "hidden" || style.overflow === "clip";
    const hidden =
      style.display === "none" || style.visibility === "hidden" || style.visibility === "collapse" ||
      Number(style.opacity) === 0 || Number.parseFloat(style.fontSize) === 0 ||
      (clipped && (box.width === 0 || box.height === 0)) ||
      box.right < -1000 || box.bottom < -1000 || box.left > width + 1000 ||
      (style.color === style.backgroundColor && style.backgroundColor !== "rgba(0, 0, 0, 0)");
    if (hidden) element.setAttribute(${JSON.stringify(HIDDEN_MARK)}, "");
  }
})()`;

/** What the browser read of a page. */
export interface BrowserRead {
  /** The DOM as HTML, hidden elements marked. */
  readonly html: string;
  /** The final URL; null for a document sent as HTML. */
  readonly url: string | null;
  /** The capture of the same page load, when asked. */
  readonly capture: Capture | null;
}

/** Loads `source` with `options` and reads its DOM before the deadline; with `snapshot`, captures it first. */
export function readInBrowser(source: RenderSource, options: CaptureOptions, snapshot: boolean, deadline: Deadline): Promise<BrowserRead> {
  return withSettledPage(source, options, deadline, async (settled) => {
    const { page, evaluate } = settled.loaded;
    // A shell page's scripts draw after timers as well as fetches: the pipeline's settling may not wait for them.
    await scriptsDrawn(settled.loaded);
    const capture = snapshot ? await captureSettled(settled, source, options) : null;
    await evaluate(MARK_HIDDEN);
    const html = await settled.loaded.settled(() => page.content());
    return { html, url: source.kind === "url" ? page.url() : null, capture };
  });
}
