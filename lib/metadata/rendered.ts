import { withPage } from "../render/browser.js";
import { guardFailure, invalidUrl, renderTimeout, translateNavigationError, translateRenderError } from "../render/errors.js";

// The browser fallback for pages whose static HTML is an empty shell filled in by scripts: load the
// page in a fresh incognito context behind the render guard, let the scripts settle, and hand the
// resulting DOM to the same parser as the fast path.

// After `load`, wait this long without network traffic (capped) so that fetched content is drawn.
const NETWORK_IDLE_MS = 300;
const NETWORK_IDLE_CAP_MS = 2_000;

/** The page's DOM as HTML after its scripts ran, and its final URL; before `until` (epoch ms). */
export async function renderedHtml(url: string, until: number): Promise<{ html: string; url: string }> {
  return withPage(async ({ page, guard }) => {
    const budget = until - Date.now();
    if (budget <= 0) throw renderTimeout("There was no time left to load the page in a browser.");
    let response;
    try {
      response = await page.goto(url, { waitUntil: "load", timeout: budget });
    } catch (error) {
      throw translateNavigationError(error, url, guard, Math.round(budget / 1000));
    }
    if (response && response.status() >= 400) throw invalidUrl(guardFailure(response.url(), guard) ?? `${response.url()} answered HTTP ${response.status()}`);
    try {
      await page.waitForNetworkIdle({ idleTime: NETWORK_IDLE_MS, timeout: Math.max(1, Math.min(NETWORK_IDLE_CAP_MS, until - Date.now())) }).catch(() => undefined);
      return { html: await page.content(), url: page.url() };
    } catch (error) {
      throw translateRenderError(error);
    }
  });
}
