import type { APIGatewayProxyEventV2 } from "aws-lambda";

const normalized = new WeakMap<APIGatewayProxyEventV2, Record<string, string>>();

/** The request's headers with lower-case names, computed once per event and shared by every step. */
export function lowerCaseHeaders(event: APIGatewayProxyEventV2): Readonly<Record<string, string>> {
  let headers = normalized.get(event);
  if (!headers) {
    headers = {};
    for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
    normalized.set(event, headers);
  }
  return headers;
}
