import type { Deadline } from "../deadline.js";
import type { RenderSource } from "../render/options.js";
import { type LoadedPage, withLoadedPage } from "../render/page-load.js";

// The browser fallback for pages whose static HTML is an empty shell filled in by scripts: load the
// page through render's page-load API (fresh incognito context behind the render guard, to its
// `load` event, within the page-load limit), let the scripts settle, and hand the resulting DOM to
// the same parser as the fast path.

// After `load`, wait this long without network traffic (capped): unlike a capture's network-quiet
// wait, this one always dwells, since a shell page's scripts draw after timers as well as fetches.
const NETWORK_IDLE_MS = 300;
const NETWORK_IDLE_CAP_MS = 2_000;

/** Lets a loaded page's scripts draw: until its network is idle for a moment, within a cap and the page-load limit. */
export const scriptsDrawn = ({ page, remaining }: Pick<LoadedPage, "page" | "remaining">): Promise<void> =>
  page.waitForNetworkIdle({ idleTime: NETWORK_IDLE_MS, timeout: Math.max(1, Math.min(NETWORK_IDLE_CAP_MS, remaining())) }).catch(() => undefined);

/** The page's DOM as HTML after its scripts ran, and its final URL, before the deadline. */
export function renderedHtml(source: RenderSource, deadline: Deadline): Promise<{ html: string; url: string }> {
  return withLoadedPage(
    source,
    deadline,
    async () => undefined,
    async (loaded) => {
      await scriptsDrawn(loaded);
      const { page } = loaded;
      return { html: await page.content(), url: page.url() };
    },
  );
}
