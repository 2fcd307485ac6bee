import { jobRequest } from "../lib/api/schemas.js";
import { placeHold } from "../lib/billing/holds.js";
import { jobAnswer } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { assertAllReachable, assertWebhook } from "../lib/http/outbound.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { feed } from "../lib/jobs/feed.js";
import { sealRequests, storeRequests } from "../lib/jobs/requests.js";
import { createJob, newJobId } from "../lib/jobs/store.js";
import { describeError, log } from "../lib/log.js";
import { priceOf, routeById } from "../lib/routes.js";

// POST /api/v1/jobs: up to 100 requests of one endpoint, every one validated before anything is
// queued (a bad one is a 400 naming its index); 202 with the job as GET shows it. The price of all
// its items is held against the balance now (402 when it cannot be), and each item is charged out
// of the hold when it starts, or gives its share back (docs/api.md, "Jobs"). A webhook URL and items' upload URLs must pass the
// network guard now (and do again when used); a webhook needs the account's secret to sign with.
export const handler = withHttp({ route: "jobs-create", schema: jobRequest, access: keyAccess }, async ({ account, body }) => {
  await assertAllReachable(body.items.flatMap((item, index) => (item.upload ? [[`items.${index}.upload.url`, item.upload.url] as const] : [])));
  if (body.webhookUrl) await assertWebhook(account.accountId, body.webhookUrl);
  const id = newJobId();
  // The price of every item is held now: a job the balance cannot cover is refused, with nothing queued.
  const rule = routeById(body.endpoint).price!;
  // Kept with their secrets sealed, each under a key its item's row holds until the item ends (docs/design.md, "Secrets at rest").
  const kept = await sealRequests<(typeof body.items)[number]>(id, body.items);
  const requests = body.items.map((request, index) => ({ ...kept[index]!, timeout: request.timeout, price: priceOf(rule, request) }));
  await placeHold(
    account.accountId,
    id,
    requests.reduce((sum, { price }) => sum + price, 0),
  );
  await storeRequests(
    id,
    kept.map(({ request }) => request),
  );
  const webhook = body.webhookUrl ? { webhookUrl: body.webhookUrl, ...(body.webhookEvents?.length ? { webhookEvents: body.webhookEvents } : {}) } : {};
  const { job, items } = await createJob(id, account.accountId, body.endpoint, requests, webhook);
  // Its first items go to the queue now, as many as the account's share of the workers allows; the rest as its items end (lib/jobs/feed.ts).
  try {
    await feed(account.accountId);
  } catch (error) {
    // The items stay queued; the reconciler sends them within a minute.
    log.error("sending a job's first items failed; the reconciler will", { jobId: id, error: describeError(error) });
  }
  return json(await jobAnswer(job, items), 202, { Location: routeById("jobs-get").path.replace("{jobId}", job.id) });
});
