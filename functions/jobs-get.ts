import { jobAnswer, ownJob } from "../lib/http/jobs.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/jobs/{jobId}: the job's status, each item's status, charge and result (outputs behind
// links signed now) or error. Another account's job is as unknown as one that does not exist.
export const handler = withHttp({ route: "jobs-get", access: keyAccess }, async ({ account, params }) => {
  const { job, items } = await ownJob(account.accountId, params.jobId ?? "");
  return json(await jobAnswer(job, items));
});
