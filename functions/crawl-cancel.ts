import { finishIfIdle, getCrawl, stopCrawl } from "../lib/crawl/store.js";
import { crawlAnswer, ownCrawl } from "../lib/http/crawls.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// DELETE /api/v1/crawl/{crawlId}: no page is sent after it; the pages running end as they would
// (charged when delivered), then the crawl is cancelled and what it still holds goes back.
// Answers the crawl as it now is.
export const handler = withHttp({ route: "crawl-cancel", access: keyAccess }, async ({ account, params }) => {
  const crawl = ownCrawl(account.accountId, await getCrawl(params.crawlId ?? ""));
  await stopCrawl(crawl, "cancelled");
  return json(await crawlAnswer(ownCrawl(account.accountId, await finishIfIdle(crawl.id))));
});
