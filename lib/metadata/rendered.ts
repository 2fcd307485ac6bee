import { withPage } from "../render/browser.js";
import { navigate, pageLoadBudget } from "../render/capture.js";
import { renderTimeout, translateRenderError } from "../render/errors.js";

// The browser fallback for pages whose static HTML is an empty shell filled in by scripts: load the
// page as a screenshot does (fresh incognito context behind the render guard, to its `load` event),
// let the scripts settle, and hand the resulting DOM to the same parser as the fast path.

// After `load`, wait this long without network traffic (capped): unlike a capture's network-quiet
// wait, this one always dwells, since a shell page's scripts draw after timers as well as fetches.
const NETWORK_IDLE_MS = 300;
const NETWORK_IDLE_CAP_MS = 2_000;

/** The page's DOM as HTML after its scripts ran, and its final URL; within the request's `deadline` (epoch ms). */
export async function renderedHtml(url: string, deadline: number): Promise<{ html: string; url: string }> {
  return withPage(async (session) => {
    // As for a capture, the page-load clock starts once this render has its browser slot.
    const budget = pageLoadBudget(deadline);
    if (budget <= 0) throw renderTimeout("There was no time left to load the page in a browser.");
    const until = Date.now() + budget;
    await navigate(session, { kind: "url", url }, budget, Math.round(budget / 1000));
    const { page } = session;
    await page.waitForNetworkIdle({ idleTime: NETWORK_IDLE_MS, timeout: Math.max(1, Math.min(NETWORK_IDLE_CAP_MS, until - Date.now())) }).catch(() => undefined);
    return { html: await page.content(), url: page.url() };
  }).catch((error: unknown) => {
    // A crashed browser or a failed read is RENDER_ERROR; our own errors (from navigate) pass through.
    throw translateRenderError(error);
  });
}
