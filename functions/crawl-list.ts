import { listCrawls } from "../lib/crawl/store.js";
import { crawlSummary } from "../lib/http/crawl-start.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

/** The newest crawls listed. */
const LISTED = 20;

// GET /api/v1/crawl: the account's newest crawls (at most 20), each with its status, counts and cost.
export const handler = withHttp({ route: "crawl-list", access: keyAccess }, async ({ account }) =>
  json({ crawls: (await listCrawls(account.accountId, LISTED)).map(crawlSummary) }),
);
