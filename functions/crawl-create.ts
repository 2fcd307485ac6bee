import { crawlRequest } from "../lib/api/schemas.js";
import { crawlSummary, startCrawl } from "../lib/http/crawl-start.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { routeById } from "../lib/routes.js";

// POST /api/v1/crawl: a site read page by page from a queue (docs/crawl.md, "Crawl"). `limit` pages
// at a rendered page's price are held against the balance now (402 when they cannot be); each page
// delivered is charged out of the hold, and the rest goes back when the crawl ends.
export const handler = withHttp({ route: "crawl-create", schema: crawlRequest, access: keyAccess }, async ({ account, body }) => {
  const crawl = await startCrawl(account.accountId, body);
  return json(crawlSummary(crawl), 202, { Location: routeById("crawl-get").path.replace("{crawlId}", crawl.id) });
});
