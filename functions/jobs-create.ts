import { placeHold } from "../lib/billing/holds.js";
import { config } from "../lib/config.js";
import { invalidParams } from "../lib/errors.js";
import { jobAnswer } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { jobRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";
import { feed } from "../lib/jobs/feed.js";
import { storeRequests } from "../lib/jobs/requests.js";
import { createJob, newJobId } from "../lib/jobs/store.js";
import { webhookSecretOf } from "../lib/jobs/webhooks.js";
import { describeError, log } from "../lib/log.js";
import { resolveTarget } from "../lib/render/guard/network-guard.js";
import { priceOf, routeById } from "../lib/routes.js";

// POST /api/v1/jobs: up to 100 requests of one endpoint, every one validated before anything is
// queued (a bad one is a 400 naming its index); 202 with the job as GET shows it. The price of all
// its items is held against the balance now (402 when it cannot be), and each item is charged out
// of the hold when it starts, or gives its share back (docs/api.md, "Jobs"). A webhook URL and items' upload URLs must pass the
// network guard now (and do again when used); a webhook needs the account's secret to sign with.
/** Refuses (400, naming `field`) a URL the network guard would refuse: checked now, and again when it is used. */
async function assertReachable(field: string, href: string): Promise<void> {
  const url = new URL(href);
  const target = await resolveTarget(url.hostname, Number(url.port || (url.protocol === "https:" ? 443 : 80)), config.privateHosts);
  if (!target.ok) throw invalidParams(`Invalid request: ${field}: ${target.reason}.`);
}

export const handler = withHttp({ route: "jobs-create", schema: jobRequest, access: keyAccess }, async ({ account, body }) => {
  for (const [index, item] of body.items.entries()) if (item.upload) await assertReachable(`items.${index}.upload.url`, item.upload.url);
  if (body.webhookUrl) {
    await assertReachable("webhookUrl", body.webhookUrl);
    if (!(await webhookSecretOf(account.accountId)))
      throw invalidParams("Invalid request: webhookUrl: the account has no webhook secret to sign with; make one with POST /api/v1/webhook-secret.");
  }
  const id = newJobId();
  // The price of every item is held now: a job the balance cannot cover is refused, with nothing queued.
  const rule = routeById(body.endpoint).price!;
  const requests = body.items.map((request) => ({ request, timeout: request.timeout, price: priceOf(rule, request) }));
  await placeHold(
    account.accountId,
    id,
    requests.reduce((sum, { price }) => sum + price, 0),
  );
  await storeRequests(id, body.items);
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
