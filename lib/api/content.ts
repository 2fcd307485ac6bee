// What /api/v1/content answers for a request, whether it is answered now (lib/http/content.ts, the
// MCP tools read_page and scrape) or kept as a job's item (lib/jobs).
import type { z } from "zod";
import { readContent } from "../content/page.js";
import type { Deadline } from "../deadline.js";
import type { Capture } from "../render/capture.js";
import { geoField } from "../render/geo.js";
import { contentPageOptions, type contentRequest } from "./schemas.js";

type ContentBody = z.output<typeof contentRequest>;

/**
 * What POST /api/v1/content answers for a validated body (the MCP tools read_page and scrape and a
 * job's content items too); a snapshot's capture is stored by `storeImage`.
 */
export async function contentBody<T>(
  body: Omit<ContentBody, "screenshot"> & Partial<Pick<ContentBody, "screenshot">>,
  deadline: Deadline,
  storeImage: (capture: Capture) => Promise<T>,
) {
  const page = await readContent({ ...body, page: contentPageOptions(body), screenshot: body.screenshot !== undefined && body.screenshot !== false }, deadline);
  const content = page.content[body.format];
  const answer = {
    url: page.url,
    title: page.title,
    [body.format]: content,
    metadata: page.metadata,
    ...(body.links ? { links: page.content.links } : {}),
    ...(page.data ? { data: page.data } : {}),
    ...(page.capture ? { screenshot: await storeImage(page.capture) } : {}),
    rendered: page.rendered,
    ...(page.incomplete ? { incomplete: page.incomplete } : {}),
    ...geoField(body),
    // About four characters a token in English prose: an agent's budget, not a bill.
    tokens: Math.ceil(content.length / 4),
  };
  // The logs are the caller's to keep (linked in an answer, or with a job).
  return { answer, logs: page.logs };
}
