import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { jobStatus, listJobs, readJob } from "../lib/jobs/store.js";

/** The newest jobs listed. */
const LISTED = 20;

// GET /api/v1/jobs: the account's newest jobs (at most 20), each with its status and item counts.
export const handler = withHttp({ route: "jobs-list", access: keyAccess }, async ({ account }) => {
  const jobs = await Promise.all((await listJobs(account.accountId, LISTED)).map((id) => readJob(id)));
  return json({
    jobs: jobs.flatMap((found) =>
      found
        ? [
            {
              id: found.job.id,
              endpoint: found.job.endpoint,
              status: jobStatus(found.job, found.items),
              created_at: found.job.createdAt,
              items: found.items.length,
              succeeded: found.items.filter((i) => i.status === "succeeded").length,
              failed: found.items.filter((i) => i.status === "failed").length,
              charged_micro_usd: found.items.reduce((sum, i) => sum + (i.charged ?? 0), 0),
            },
          ]
        : [],
    ),
  });
});
