import type { Deadline } from "../deadline.js";
import type { RenderSource } from "../render/options.js";
import { withLoadedPage } from "../render/page-load.js";

// The browser fallback for pages whose static HTML is an empty shell filled in by scripts: load the
// page through render's page-load API (fresh incognito context behind the render guard, to its
// `load` event, within the page-load limit), let the scripts settle, and hand the resulting DOM to
// the same parser as the fast path.

// After `load`, wait this long without network traffic (capped): unlike a capture's network-quiet
// wait, this one always dwells, since a shell page's scripts draw after timers as well as fetches.
const NETWORK_IDLE_MS = 300;
const NETWORK_IDLE_CAP_MS = 2_000;

/**
 * Marks with the attribute every element a reader cannot see by its computed style (display,
 * visibility, opacity, font size 0, a zero box that clips its text, far off-screen, text in its
 * background's colour), for the content extraction (lib/content/visible.ts) to leave out. A string,
 * as LoadedPage.evaluate takes scripts; bounded to MARK_LIMIT elements.
 */
const markHidden = (attribute: string, limit: number) => `(() => {
  const all = document.body ? Array.from(document.body.querySelectorAll("*")).slice(0, ${limit}) : [];
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
    if (hidden) element.setAttribute(${JSON.stringify(attribute)}, "");
  }
})()`;

/** Elements whose style markHidden reads at most (a hostile page may hold millions). */
const MARK_LIMIT = 50_000;

/**
 * The page's DOM as HTML after its scripts ran, and its final URL, before the deadline; with
 * `hiddenMark`, elements hidden by their computed style carry that attribute.
 */
export function renderedHtml(source: RenderSource, deadline: Deadline, hiddenMark?: string): Promise<{ html: string; url: string }> {
  return withLoadedPage(
    source,
    deadline,
    async () => undefined,
    async ({ page, remaining, evaluate }) => {
      await page.waitForNetworkIdle({ idleTime: NETWORK_IDLE_MS, timeout: Math.max(1, Math.min(NETWORK_IDLE_CAP_MS, remaining())) }).catch(() => undefined);
      if (hiddenMark) await evaluate(markHidden(hiddenMark, MARK_LIMIT));
      return { html: await page.content(), url: page.url() };
    },
  );
}
