import { jobAnswer } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { jobRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";
import { enqueueItems } from "../lib/jobs/queue.js";
import { storeRequests } from "../lib/jobs/requests.js";
import { cancelJob, createJob, newJobId, readJob } from "../lib/jobs/store.js";
import { routeById } from "../lib/routes.js";

// POST /api/v1/jobs: up to 100 requests of one endpoint, every one validated before anything is
// queued (a bad one is a 400 naming its index); 202 with the job as GET shows it. Each item is
// charged when it starts (docs/api.md, "Jobs").
export const handler = withHttp({ route: "jobs-create", schema: jobRequest, access: keyAccess }, async ({ account, body }) => {
  const id = newJobId();
  await storeRequests(id, body.items);
  const job = await createJob(id, account.accountId, body.endpoint, body.items.length);
  try {
    await enqueueItems(job.id, job.count);
  } catch (error) {
    // What was not queued must not wait for ever: the job is cancelled (an item already running ends as it would).
    const stored = await readJob(job.id);
    if (stored) await cancelJob(stored.job, stored.items);
    throw error;
  }
  const stored = await readJob(job.id);
  return json(await jobAnswer(stored!.job, stored!.items), 202, { Location: routeById("jobs-get").path.replace("{jobId}", job.id) });
});
