import { contentBody } from "../api/content.js";
import type { Deadline } from "../deadline.js";
import { deliverSnapshot, linkLogs, pageHeaders, presignedLog } from "./deliver.js";
import { type HttpResponse, json } from "./responses.js";

/** The answer of POST /api/v1/content (and the MCP tools read_page and scrape) for a validated body. */
export async function contentAnswer(body: Parameters<typeof contentBody>[0], deadline: Deadline): Promise<HttpResponse> {
  const { answer, logs } = await contentBody(body, deadline, deliverSnapshot);
  const linked = await linkLogs(logs, presignedLog);
  return json({ ...answer, ...linked.fields }, 200, { ...pageHeaders({ incomplete: answer.incomplete ?? null, geo: answer.geo }), ...linked.headers });
}
