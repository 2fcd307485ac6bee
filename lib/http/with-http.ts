import middy from "@middy/core";
import type { MiddlewareObj, Request } from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { z } from "zod";
import { describeError, log } from "../log.js";
import { routes, type Route } from "../routes.js";
import { AppError, invalidParams } from "./errors.js";
import { toApiGatewayResult, type HttpResponse } from "./responses.js";
import { accessControl, type AccessState } from "./access.js";
import type { Account } from "../billing/accounts.js";
import { lowerCaseHeaders } from "./headers.js";
import { validate } from "./validate.js";

/** What a handler receives: the validated body and the request's context. */
export interface HttpRequest<Body> {
  readonly body: Body;
  /** Header names lower-cased; repeated headers joined with ", " as API Gateway does. */
  readonly headers: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly sourceIp: string;
  readonly method: string;
  readonly path: string;
  readonly route: Route | undefined;
  /** The caller's account when an API key was sent (always set on "key" routes). */
  readonly account: Account | null;
  /** Epoch ms by which the work must be done so the answer still fits in the Lambda's time. */
  readonly deadline: number;
  /** Aborted shortly before the Lambda's own timeout. */
  readonly signal: AbortSignal;
  readonly event: APIGatewayProxyEventV2;
  readonly context: Context;
}

type Internal = { started: number };
type MiddyRequest = Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal>;

// Time reserved before the Lambda timeout to answer with our JSON error instead of dying mid-request.
const TIMEOUT_EARLY_MS = 750;
// Time kept back from the work's deadline for what follows it: storing a large output, refunds, the response.
const RESPONSE_RESERVE_MS = 2_000;

/** Parses the raw body: it must be a JSON object when the endpoint takes one. */
function parseJsonBody(event: APIGatewayProxyEventV2): unknown {
  if (event.body === undefined || event.body === "") throw invalidParams("Invalid request: the body must be a JSON object.");
  const raw = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw invalidParams("Invalid request: the body is not valid JSON.", error);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalidParams("Invalid request: the body must be a JSON object.");
  }
  return parsed;
}

/** Maps any thrown value to the JSON error body: AppErrors as they are, anything else as a logged 500. */
function errorResponse(error: unknown, request: MiddyRequest): HttpResponse {
  const requestId = request.event.requestContext.requestId;
  if (error instanceof AppError) {
    if (error.status >= 500) log.error("request failed", { requestId, code: error.code, error: describeError(error) });
    return {
      kind: "json",
      status: error.status,
      headers: { ...error.headers },
      body: { ...error.body, error: { code: error.code, message: error.message } },
    };
  }
  // middy's own early-timeout error: the function ran out of time before answering.
  const timedOut = error instanceof Error && error.name === "TimeoutError";
  log.error("unhandled error", { requestId, error: describeError(error) });
  return {
    kind: "json",
    status: timedOut ? 504 : 500,
    headers: {},
    body: {
      error: timedOut
        ? { code: "RENDER_TIMEOUT", message: "The request ran out of time before it could finish." }
        : { code: "INTERNAL_ERROR", message: `Something went wrong on our side. Quote request id ${requestId} if you report it.` },
    },
  };
}

/**
 * Builds the one middy chain every endpoint uses. Order (written down only here):
 *   1. http-context: request id, lower-cased headers; turns any error into `{error:{code,message}}`
 *      (its onError is the only place errors become responses) and stamps X-Request-Id on every answer.
 *   2. json-body + validation: when the endpoint takes a body, parse it (400 when not a JSON object)
 *      and validate it with the endpoint's zod schema (400 INVALID_PARAMS naming field and rule).
 *   3. access (lib/http/access.ts): authentication (401, or 402 on a priced endpoint without
 *      Authorization), rate limit (429), then the charge; its onError refunds a charged request that
 *      failed. Validation comes first so nobody pays for a request that cannot succeed (SPEC.md).
 *   4. the handler: one lib call returning an HttpResponse.
 */
export function withHttp<S extends z.ZodType | undefined>(
  options: { route: string; schema?: S },
  handler: (request: HttpRequest<S extends z.ZodType ? z.output<S> : undefined>) => Promise<HttpResponse>,
) {
  const route = routes.find((r) => r.id === options.route);

  const accessLog = ({ event, response, internal }: MiddyRequest) =>
    log.info("request", {
      requestId: event.requestContext.requestId,
      method: event.requestContext.http.method,
      path: event.rawPath,
      status: response?.statusCode,
      ms: Date.now() - internal.started,
    });

  const httpContext: MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal> = {
    before: (request) => {
      request.internal.started = Date.now();
    },
    after: accessLog,
    onError: (request) => {
      request.response = toApiGatewayResult(errorResponse(request.error, request), request.event.requestContext.requestId);
      accessLog(request);
    },
  };

  // The validated body travels from the middleware to the handler keyed by the event object.
  const bodies = new WeakMap<APIGatewayProxyEventV2, unknown>();
  const access = new WeakMap<APIGatewayProxyEventV2, AccessState>();
  const body: MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal> = {
    before: ({ event }) => {
      if (options.schema) bodies.set(event, validate(options.schema, parseJsonBody(event)));
    },
  };

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal>({
    timeoutEarlyInMillis: TIMEOUT_EARLY_MS,
  })
    .use(httpContext)
    .use(body)
    .use(accessControl(route, access, (event) => bodies.get(event)))
    .handler(async (event, context, { signal }) => {
      const response = await handler({
        body: bodies.get(event) as never,
        headers: lowerCaseHeaders(event),
        requestId: event.requestContext.requestId,
        sourceIp: event.requestContext.http.sourceIp,
        method: event.requestContext.http.method,
        path: event.rawPath,
        route,
        account: access.get(event)?.account ?? null,
        deadline: Date.now() + context.getRemainingTimeInMillis() - RESPONSE_RESERVE_MS,
        signal,
        event,
        context,
      });
      return toApiGatewayResult(response, event.requestContext.requestId);
    });
}
