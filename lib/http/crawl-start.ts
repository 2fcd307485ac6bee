import type { z } from "zod";
import type { crawlRequest } from "../api/schemas.js";
import { sealRequest } from "../api/secrets.js";
import { placeHold } from "../billing/holds.js";
import { type Crawl, createCrawl, listCrawls, newCrawlId } from "../crawl/store.js";
import { normalizeUrl, patternOf } from "../crawl/urls.js";
import { AppError, invalidParams } from "../errors.js";
import { feed } from "../jobs/feed.js";
import { describeError, log } from "../log.js";
import { JOB_RETENTION_DAYS } from "../packaging.js";
import { PRICES } from "../routes.js";
import { assertReachable, assertWebhook } from "./outbound.js";

// Starting a crawl, for POST /api/v1/crawl and the MCP tool crawl_site, and the summary of one (its
// bundle holds no storage client: what reads a crawl's pages is lib/http/crawls.ts).

/** Crawls one account runs at once. */
export const MAX_RUNNING = 10;
/** A crawl's request as JSON, at most. */
const MAX_REQUEST_BYTES = 100_000;

/** The crawl's summary: what GET lists for each of an account's crawls. */
export const crawlSummary = (crawl: Crawl) => ({
  id: crawl.id,
  url: crawl.request.url,
  status: crawl.status,
  created_at: crawl.createdAt,
  ...(crawl.finishedAt ? { finished_at: crawl.finishedAt } : {}),
  expires_at: new Date(Date.parse(crawl.createdAt) + JOB_RETENTION_DAYS * 86_400_000).toISOString(),
  limit: crawl.request.limit,
  counts: { discovered: crawl.discovered, delivered: crawl.delivered, failed: crawl.failed, skipped: crawl.skipped },
  charged_micro_usd: crawl.charged,
  ...(crawl.status === "running" ? { held_micro_usd: crawl.held - crawl.charged } : {}),
});

/**
 * Starts a crawl of `body` for `accountId` (POST /api/v1/crawl, the MCP tool crawl_site): its start
 * must pass the network guard now (every page does again when fetched); `limit` pages at a
 * rendered page's price are held (402 when they cannot be), its secrets sealed under a key the
 * crawl's row holds until it ends, its start queued and sent at once if the account's share allows.
 */
export async function startCrawl(accountId: string, body: z.output<typeof crawlRequest>): Promise<Crawl> {
  // Kept in the crawl's own row (DynamoDB holds 400 KB an item): refused before anything is held.
  if (Buffer.byteLength(JSON.stringify(body)) > MAX_REQUEST_BYTES)
    throw invalidParams(`Invalid request: a crawl's request is at most ${MAX_REQUEST_BYTES / 1000} KB as JSON (globs, headers and cookies).`);
  // Each running crawl costs every feed of its account a read: an account runs a few at once.
  const running = (await listCrawls(accountId, MAX_RUNNING * 2)).filter((crawl) => crawl.status === "running").length;
  if (running >= MAX_RUNNING)
    throw new AppError("RATE_LIMITED", `An account has at most ${MAX_RUNNING} crawls running at once; wait for one to end, or cancel one.`, {
      headers: { "Retry-After": "60" },
    });
  await assertReachable("url", body.url);
  if (body.webhookUrl) await assertWebhook(accountId, body.webhookUrl);
  const start = normalizeUrl(body.url)!;
  const id = newCrawlId();
  const { request, secretKey } = await sealRequest({ ...body, url: start }, `crawl ${id}`);
  const held = body.limit * PRICES.crawlRenderedPage;
  await placeHold(accountId, id, held, new Date(), "crawl");
  const crawl = await createCrawl(
    { id, accountId, createdAt: new Date().toISOString(), request, ...(secretKey ? { secretKey } : {}), held },
    { url: start, depth: 0, foundBy: "start", pattern: patternOf(start), barren: 0 },
  );
  try {
    await feed(accountId);
  } catch (error) {
    // Its start waits queued; the reconciler sends it within a minute.
    log.error("sending a crawl's start failed; the reconciler will", { crawlId: id, error: describeError(error) });
  }
  return crawl;
}
