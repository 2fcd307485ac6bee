import { crawlRequest } from "../lib/api/schemas.js";
import { sealRequest } from "../lib/api/secrets.js";
import { placeHold } from "../lib/billing/holds.js";
import { createCrawl, newCrawlId } from "../lib/crawl/store.js";
import { normalizeUrl, patternOf } from "../lib/crawl/urls.js";
import { crawlSummary } from "../lib/http/crawls.js";
import { keyAccess } from "../lib/http/key-access.js";
import { assertReachable } from "../lib/http/outbound.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { feed } from "../lib/jobs/feed.js";
import { describeError, log } from "../lib/log.js";
import { PRICES, routeById } from "../lib/routes.js";

// POST /api/v1/crawl: a site read page by page from a queue (docs/crawl.md, "Crawl"). Its start must
// pass the network guard now (every page does again when fetched). `limit` pages at a rendered
// page's price are held against the balance now (402 when they cannot be); each page delivered is
// charged out of the hold, and the rest goes back when the crawl ends.
export const handler = withHttp({ route: "crawl-create", schema: crawlRequest, access: keyAccess }, async ({ account, body }) => {
  await assertReachable("url", body.url);
  const start = normalizeUrl(body.url)!;
  const id = newCrawlId();
  const createdAt = new Date().toISOString();
  const held = body.limit * PRICES.crawlRenderedPage;
  // Kept with its secrets (headers, cookies, a proxy's password) sealed under a key the crawl's row holds until it ends.
  const { request, secretKey } = await sealRequest({ ...body, url: start }, `crawl ${id}`);
  await placeHold(account.accountId, id, held, new Date(), "crawl");
  const crawl = await createCrawl(
    { id, accountId: account.accountId, createdAt, request, ...(secretKey ? { secretKey } : {}), held },
    { url: start, depth: 0, foundBy: "start", pattern: patternOf(start), barren: 0 },
  );
  try {
    await feed(account.accountId);
  } catch (error) {
    // Its start waits queued; the reconciler sends it within a minute.
    log.error("sending a crawl's start failed; the reconciler will", { crawlId: id, error: describeError(error) });
  }
  return json(crawlSummary(crawl), 202, { Location: routeById("crawl-get").path.replace("{crawlId}", id) });
});
