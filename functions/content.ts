import { readContent } from "../lib/content/page.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { json } from "../lib/http/responses.js";
import { contentRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/content: a page (or an HTML document) as Markdown, text or cleaned HTML, its main
// content by default, with its metadata and, when asked, its links. $0.002 (docs/api.md, "Content").
export const handler = withHttp({ route: "content", access: paidAccess, schema: contentRequest }, async ({ body, deadline }) => {
  const page = await readContent(body, deadline);
  const content = page[body.format];
  return json({
    url: page.url,
    title: page.title,
    [body.format]: content,
    metadata: page.metadata,
    ...(body.links ? { links: page.links } : {}),
    ...(page.data ? { data: page.data } : {}),
    rendered: page.rendered,
    // About four characters a token in English prose: an agent's budget, not a bill.
    tokens: Math.ceil(content.length / 4),
  });
});
