import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";

/** What a handler returns; lib/http/with-http.ts turns it into the API Gateway result. */
export type HttpResponse =
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "binary"; status: number; body: Buffer; contentType: string; headers: Record<string, string> }
  | { kind: "text"; status: number; body: string; contentType: string; headers: Record<string, string> };

/** A JSON response. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): HttpResponse => ({
  kind: "json",
  status,
  body,
  headers,
});

/** Raw bytes (an image or a PDF), base64-encoded for API Gateway. */
export const binary = (body: Buffer, contentType: string, headers: Record<string, string> = {}): HttpResponse => ({
  kind: "binary",
  status: 200,
  body,
  contentType,
  headers,
});

/** A text document (the dashboard's HTML). */
export const text = (body: string, contentType: string, headers: Record<string, string> = {}, status = 200): HttpResponse => ({
  kind: "text",
  status,
  body,
  contentType,
  headers,
});

/** 303 See Other to `location` (a presigned link for a large output). */
export const seeOther = (location: string, headers: Record<string, string> = {}): HttpResponse => ({
  kind: "json",
  status: 303,
  body: { location },
  headers: { ...headers, Location: location },
});

/** Two years, the HSTS preload list's own minimum being one. */
export const HSTS_MAX_AGE_SECONDS = 63_072_000;

const SECURITY_HEADERS = { "X-Content-Type-Options": "nosniff", "Strict-Transport-Security": `max-age=${HSTS_MAX_AGE_SECONDS}` } as const;

/** Serializes a handler's response for API Gateway HTTP API (payload v2). */
export function toApiGatewayResult(response: HttpResponse, requestId: string): APIGatewayProxyStructuredResultV2 {
  // On every answer: nosniff (a body is only ever what its Content-Type says: an error's JSON is never
  // run as a page) and HSTS (the service is HTTPS-only wherever it is deployed; browsers ignore it
  // over plain HTTP, as under `npm run dev`). The CDN adds the same (stacks/Cdn.ts).
  const headers = { ...response.headers, ...SECURITY_HEADERS, "X-Request-Id": requestId };
  switch (response.kind) {
    case "json":
      return {
        statusCode: response.status,
        headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
        body: JSON.stringify(response.body),
        isBase64Encoded: false,
      };
    case "binary":
      return {
        statusCode: response.status,
        headers: { "Content-Type": response.contentType, ...headers },
        body: response.body.toString("base64"),
        isBase64Encoded: true,
      };
    case "text":
      return { statusCode: response.status, headers: { "Content-Type": response.contentType, ...headers }, body: response.body, isBase64Encoded: false };
  }
}
