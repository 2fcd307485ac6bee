import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FiltersEngine } from "@ghostery/adblocker";
import { config } from "../../config.js";
import { log } from "../../log.js";
import type { FilterList } from "../packaging/filter-build.js";

// blockAds and blockTrackers (docs/api.md, "Page controls"): AdGuard's filter lists matched by
// Ghostery's filter engine (lib/render/packaging/filter-build.ts). Building an engine takes about a second,
// loading a built one 10-20 ms: the deployed stack has them built in a layer (FILTER_LISTS_DIR);
// locally they are built once into the temp dir and kept for the next process, as the fonts are.
// The engine's code (a tenth of a rendering function's) is loaded with the first list asked for.

/**
 * A URL is matched on its first this many characters. Some of the lists' regular expressions take
 * time growing with the square of a URL's length: on a 30 KB URL a page builds, up to half a second,
 * on 500 KB half a minute, all of it blocking the process. Here the worst case stays around a
 * millisecond, and hosts and paths, what the rules are about, come first.
 */
export const MATCHED_URL_CHARS = 1024;

let adblocker: typeof import("@ghostery/adblocker") | undefined;
const engines = new Map<FilterList, FiltersEngine>();

/** Loads the engines of `lists`, once per process (built first when running outside Lambda), before the page loads. */
export async function loadFilterLists(lists: readonly FilterList[]): Promise<void> {
  if (!lists.length) return;
  adblocker ??= await import("@ghostery/adblocker");
  for (const list of lists) {
    if (engines.has(list)) continue;
    const started = performance.now();
    const dir = config.FILTER_LISTS_DIR ?? path.join(tmpdir(), "shotline-filter-lists");
    if (!config.FILTER_LISTS_DIR) (await import("../packaging/filter-build.js")).buildFilterEngines(dir, [list]);
    engines.set(list, adblocker.FiltersEngine.deserialize(readFileSync(path.join(dir, `${list}.engine`))));
    log.info("filter engine loaded", { list, ms: Math.round(performance.now() - started) });
  }
}

/** Whether a request of the page at `sourceUrl` is blocked by one of `lists` (loaded by loadFilterLists first). */
export function blockedByLists(lists: readonly FilterList[], url: string, type: string, sourceUrl: string): boolean {
  if (!lists.length) return false;
  const engineOf = (list: FilterList) => {
    const engine = engines.get(list);
    if (!engine || !adblocker) throw new Error(`the ${list} filter list is not loaded`);
    return engine;
  };
  const request = adblocker!.Request.fromRawDetails({
    url: url.slice(0, MATCHED_URL_CHARS),
    type: type as import("@ghostery/adblocker").Request["type"],
    sourceUrl,
  });
  return lists.some((list) => engineOf(list).match(request).match);
}
