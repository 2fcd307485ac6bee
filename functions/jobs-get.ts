import { AppError } from "../lib/errors.js";
import { jobAnswer } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { readJob } from "../lib/jobs/store.js";

// GET /api/v1/jobs/{jobId}: the job's status, each item's status, charge and result (outputs behind
// links signed now) or error. Another account's job is as unknown as one that does not exist.
export const handler = withHttp({ route: "jobs-get", access: keyAccess }, async ({ account, params }) => {
  const found = await readJob(params.jobId ?? "");
  if (!found || found.job.accountId !== account.accountId) throw new AppError("NOT_FOUND", "No such job (jobs are kept 7 days).");
  return json(await jobAnswer(found.job, found.items));
});
