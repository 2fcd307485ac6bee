import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";

// Builds exactly what API Gateway HTTP API (payload format 2.0) and the Lambda runtime hand a
// function, so handlers run locally unchanged.

// API Gateway passes these content types as text; anything else arrives base64-encoded.
const TEXT_TYPES = /^(text\/|application\/(json|xml|x-www-form-urlencoded|javascript)|[^;]*\+json|[^;]*\+xml)/i;

/** The parts of an HTTP request an API Gateway event is built from. */
export interface RawRequest {
  method: string;
  /** Path and query, e.g. "/api/v1/health?x=1". */
  url: string;
  /** Lower-case names; repeated headers already joined. */
  headers: Record<string, string>;
  body: Buffer;
  sourceIp: string;
  httpVersion?: string;
}

/** The API Gateway HTTP API (payload 2.0) event for a request matched to `routeKey`. */
export function buildApiGatewayEvent(request: RawRequest, routeKey: string): APIGatewayProxyEventV2 {
  const { headers, body } = request;
  const url = new URL(request.url, "http://127.0.0.1");
  const queryStringParameters: Record<string, string> = {};
  for (const [key, value] of url.searchParams) queryStringParameters[key] = queryStringParameters[key] ? `${queryStringParameters[key]},${value}` : value;
  const contentType = headers["content-type"] ?? "";
  const asText = body.length === 0 || contentType === "" || TEXT_TYPES.test(contentType);
  const now = new Date();
  return {
    version: "2.0",
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: Object.keys(queryStringParameters).length ? queryStringParameters : undefined,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "127.0.0.1",
      domainPrefix: "local",
      http: {
        method: request.method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion ?? "1.1"}`,
        sourceIp: request.sourceIp,
        userAgent: headers["user-agent"] ?? "",
      },
      // API Gateway's ids look like "JcXz4gCboAMEJpg=": 10 random bytes, base64.
      requestId: randomBytes(10).toString("base64"),
      routeKey,
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : asText ? body.toString("utf8") : body.toString("base64"),
    isBase64Encoded: body.length > 0 && !asText,
  };
}

/** The API Gateway event for a Node request whose body has been read into `body`. */
export function toApiGatewayEvent(request: IncomingMessage, body: Buffer, routeKey: string): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return buildApiGatewayEvent(
    {
      method: request.method ?? "GET",
      url: request.url ?? "/",
      headers,
      body,
      sourceIp: request.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "127.0.0.1",
      httpVersion: request.httpVersion,
    },
    routeKey,
  );
}

/** A Lambda context whose remaining time counts down from `timeoutSeconds`. */
export function lambdaContext(functionName: string, memoryMB: number, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const awsRequestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMB),
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
