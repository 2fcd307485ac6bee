import { jobAnswer, ownJob } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { announce } from "../lib/jobs/events.js";
import { cancelJob, readJob } from "../lib/jobs/store.js";

// DELETE /api/v1/jobs/{jobId}: cancels the items that have not started (never charged); those
// running end as they would. Answers the job as it now is.
export const handler = withHttp({ route: "jobs-cancel", access: keyAccess }, async ({ account, params }) => {
  const { job, items } = await ownJob(account.accountId, params.jobId ?? "");
  await cancelJob(job, items);
  const now = (await readJob(job.id))!;
  // Its cancelled items have ended (all of them: a DELETE repeated after a failure notes them
  // again); once nothing runs, the job has, and its webhook says so.
  await announce(
    now.job,
    now.items.filter((item) => item.status === "cancelled"),
  );
  return json(await jobAnswer(now.job, now.items));
});
