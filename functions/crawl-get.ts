import { z } from "zod";
import { getCrawl } from "../lib/crawl/store.js";
import { crawlAnswer, ownCrawl, PAGES_LISTED } from "../lib/http/crawls.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

/** The query of GET /api/v1/crawl/{crawlId}: a page of its URLs. */
const pagesQuery = z.strictObject({
  limit: z.number({ error: "must be a number" }).int().min(1).max(PAGES_LISTED.max).default(PAGES_LISTED.default),
  cursor: z
    .string({ error: "must be the next_cursor of the last answer" })
    .regex(/^[A-Za-z0-9_-]{22}$/, { error: "must be the next_cursor of the last answer" })
    .optional(),
});

// GET /api/v1/crawl/{crawlId}: the crawl's status, counts and cost, and a page of its URLs (`limit`,
// `cursor`), each with what became of it and its output behind a link signed now. Another
// account's crawl is as unknown as one that does not exist.
export const handler = withHttp({ route: "crawl-get", schema: pagesQuery, access: keyAccess }, async ({ account, params, body }) => {
  const crawl = ownCrawl(account.accountId, await getCrawl(params.crawlId ?? ""));
  return json(await crawlAnswer(crawl, body.limit, body.cursor));
});
