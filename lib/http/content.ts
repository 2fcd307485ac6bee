import type { z } from "zod";
import { readContent } from "../content/page.js";
import type { Deadline } from "../deadline.js";
import { deliverSnapshot } from "./deliver.js";
import { type HttpResponse, json } from "./responses.js";
import { contentPageOptions, type contentRequest } from "./schemas.js";

type ContentBody = z.output<typeof contentRequest>;

/** The answer of POST /api/v1/content (and the MCP tools read_page and scrape) for a validated body. */
export async function contentAnswer(
  body: Omit<ContentBody, "screenshot"> & Partial<Pick<ContentBody, "screenshot">>,
  deadline: Deadline,
): Promise<HttpResponse> {
  const page = await readContent({ ...body, page: contentPageOptions(body), screenshot: body.screenshot !== undefined && body.screenshot !== false }, deadline);
  const content = page.content[body.format];
  return json({
    url: page.url,
    title: page.title,
    [body.format]: content,
    metadata: page.metadata,
    ...(body.links ? { links: page.content.links } : {}),
    ...(page.data ? { data: page.data } : {}),
    ...(page.capture ? { screenshot: await deliverSnapshot(page.capture) } : {}),
    rendered: page.rendered,
    // About four characters a token in English prose: an agent's budget, not a bill.
    tokens: Math.ceil(content.length / 4),
  });
}
