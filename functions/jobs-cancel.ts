import { AppError } from "../lib/errors.js";
import { jobAnswer } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { cancelJob, readJob } from "../lib/jobs/store.js";

// DELETE /api/v1/jobs/{jobId}: cancels the items that have not started (never charged); those
// running end as they would. Answers the job as it now is.
export const handler = withHttp({ route: "jobs-cancel", access: keyAccess }, async ({ account, params }) => {
  const found = await readJob(params.jobId ?? "");
  if (!found || found.job.accountId !== account.accountId) throw new AppError("NOT_FOUND", "No such job (jobs are kept 7 days).");
  await cancelJob(found.job, found.items);
  const now = await readJob(found.job.id);
  return json(await jobAnswer(now!.job, now!.items));
});
