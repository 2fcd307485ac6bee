import { AppError } from "../lib/errors.js";
import { seeOther } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { linkToOutput, OUTPUT_KEY } from "../lib/storage/outputs.js";

// GET /api/v1/outputs/{day}/{file}: a stored output, by the link an MCP tool answered
// (lib/http/deliver.ts). Its name, a random UUID, is the credential, as a presigned link's signature
// is; the answer is a redirect to a presigned link that lives a few minutes, which a client follows
// without the Authorization header it may have sent here.

/** Long enough to follow the redirect, no longer. */
const REDIRECT_LINK_SECONDS = 300;

const gone = () => new AppError("NOT_FOUND", "No such output: an output is kept for a day after its render, then deleted. Render it again.");

export const handler = withHttp({ route: "output" }, async ({ params }) => {
  const key = `outputs/${params.day}/${params.file}`;
  if (!OUTPUT_KEY.test(key)) throw gone();
  const url = await linkToOutput(key, REDIRECT_LINK_SECONDS);
  if (!url) throw gone();
  return seeOther(url);
});
