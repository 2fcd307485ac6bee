import type { z } from "zod";
import { readContent } from "../content/page.js";
import type { Deadline } from "../deadline.js";
import { type HttpResponse, json } from "./responses.js";
import type { contentRequest } from "./schemas.js";

/** The answer of POST /api/v1/content (and the MCP tools read_page and scrape) for a validated body. */
export async function contentAnswer(body: z.output<typeof contentRequest>, deadline: Deadline): Promise<HttpResponse> {
  const page = await readContent(body, deadline);
  const content = page.content[body.format];
  return json({
    url: page.url,
    title: page.title,
    [body.format]: content,
    metadata: page.metadata,
    ...(body.links ? { links: page.content.links } : {}),
    ...(page.data ? { data: page.data } : {}),
    rendered: page.rendered,
    // About four characters a token in English prose: an agent's budget, not a bill.
    tokens: Math.ceil(content.length / 4),
  });
}
