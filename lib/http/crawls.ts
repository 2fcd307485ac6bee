import { config } from "../config.js";
import { type Crawl, type CrawlPage, crawlHooks, listPages } from "../crawl/store.js";
import { AppError } from "../errors.js";
import { readDeliveries } from "../jobs/events.js";
import { downloadLink } from "../storage/outputs.js";
import { crawlSummary } from "./crawl-start.js";

// A crawl as GET /api/v1/crawl/{id} answers it (docs/crawl.md, "Crawl"): its status, counts, what
// it cost, and a page of its URLs with a cursor for the next, each page's output behind a link signed now.

/** Pages listed in one answer by default, and at most. */
export const PAGES_LISTED = { default: 100, max: 1_000 } as const;

/** A page as listed: a URL still queued when its crawl ended was skipped, for the crawl's reason. */
async function pageAnswer(crawl: Crawl, page: CrawlPage) {
  const ended = crawl.status !== "running";
  const left = ended && (page.status === "queued" || page.status === "running");
  const link = page.outputKey ? await downloadLink(page.outputKey) : null;
  return {
    url: page.url,
    status: left ? "skipped" : page.status,
    ...(left ? { reason: crawl.stopped ?? "limit" } : page.reason ? { reason: page.reason } : {}),
    depth: page.depth,
    found_by: page.foundBy,
    ...(page.finalUrl ? { final_url: page.finalUrl } : {}),
    ...(page.httpStatus ? { http_status: page.httpStatus } : {}),
    ...(page.rendered !== undefined ? { rendered: page.rendered } : {}),
    ...(page.title !== undefined ? { title: page.title } : {}),
    ...(page.lastmod ? { lastmod: page.lastmod } : {}),
    ...(page.copiedAt ? { copied_at: page.copiedAt } : {}),
    ...(page.charged ? { charged_micro_usd: page.charged } : {}),
    ...(page.error ? { error: page.error } : {}),
    ...(link ? { download_url: link.url } : {}),
  };
}

/** The crawl as GET answers it, with up to `limit` of its pages after `cursor`. */
export async function crawlAnswer(crawl: Crawl, limit: number = PAGES_LISTED.default, cursor?: string) {
  const { pages, next } = await listPages(crawl.id, limit, cursor);
  const result = crawl.resultKey ? await downloadLink(crawl.resultKey) : null;
  const hooks = crawlHooks(crawl);
  const deliveries = hooks.webhookUrl ? await readDeliveries(hooks) : [];
  return {
    ...crawlSummary(crawl),
    links_expire_in_seconds: config.DOWNLOAD_LINK_SECONDS,
    // Once it has ended and its result is written (seconds later): every delivered page, one JSON a line.
    ...(result ? { result_url: result.url } : {}),
    pages: await Promise.all(pages.map((page) => pageAnswer(crawl, page))),
    next_cursor: next,
    ...(hooks.webhookUrl
      ? {
          webhook: {
            url: hooks.webhookUrl,
            events: ["crawl.completed"],
            deliveries: deliveries.map((d) => ({ id: d.id, type: d.type, status: d.status, attempts: d.attempts })),
          },
        }
      : {}),
  };
}

/** Crawl `crawl` if it is `accountId`'s; another account's is as unknown as one that does not exist. */
export function ownCrawl(accountId: string, crawl: Crawl | null): Crawl {
  if (!crawl || crawl.accountId !== accountId) throw new AppError("NOT_FOUND", "No such crawl (crawls are kept 7 days).");
  return crawl;
}
