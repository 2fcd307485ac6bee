import { contentRequest } from "../lib/api/schemas.js";
import { contentAnswer } from "../lib/http/content.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/content: a page (or an HTML document) as Markdown, text or cleaned HTML, its main
// content by default, with its metadata and, when asked, its links and scraped fields. $0.002
// (docs/api.md, "Content").
export const handler = withHttp({ route: "content", access: paidAccess, schema: contentRequest }, async ({ body, deadline }) => contentAnswer(body, deadline));
