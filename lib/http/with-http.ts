import type { MiddlewareObj, Request } from "@middy/core";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { z } from "zod";
import { config } from "../config.js";
import { aborted, answerBy, type Deadline, orTimeout, requestDeadline, whenAborted } from "../deadline.js";
import { AppError, invalidParams } from "../errors.js";
import { describeError, log } from "../log.js";
import type { Resource } from "../payments/requirements.js";
import { type Access, type Route, type RouteId, type RouteOf, routeById } from "../routes.js";
import { asTenant } from "../tenant.js";
import {
  type AccessDependencies,
  type AccessFor,
  type AccessGrant,
  authorize,
  type CallerOf,
  callerOf,
  endHolding,
  keepForRetries,
  rateLimitHeaders,
  settle,
  undo,
} from "./access.js";
import { clientAddress } from "./client-address.js";
import { type Discovery, describe, discoveryOf, mimeTypeOf, SERVICE } from "./discovery.js";
import { lowerCaseHeaders } from "./headers.js";
import { publicOrigin } from "./hosts.js";
import type { CacheSlot } from "./render-cache.js";
import { type HttpResponse, toApiGatewayResult } from "./responses.js";
import { queryBody } from "./signed-links.js";
import { validate } from "./validate.js";

/** What every handler receives: the validated body and the request's context. */
interface BaseRequest<Body> {
  readonly body: Body;
  /** Header names lower-cased; repeated headers joined with ", " as API Gateway does. */
  readonly headers: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly sourceIp: string;
  /** The domain API Gateway was called on (on Lambda its own word; locally, the Host header's). */
  readonly domain: string;
  readonly method: string;
  readonly path: string;
  /** The path's parameters (`{keyId}` of the route's path). */
  readonly params: Readonly<Record<string, string>>;
  readonly route: Route;
  /** What an x402 payment on this request pays for. */
  readonly resource: Resource;
  /** When the work must be done, and the signal that aborts then with the row's timeout error; every lib call takes it. */
  readonly deadline: Deadline;
  /** The render cache slot access control opened (lib/http/render-cache.ts), or null: renders go through it. */
  readonly cache: CacheSlot | null;
}

/** The access dependencies a route takes (lib/http/key-access.ts, lib/http/paid-access.ts): required unless it is open. */
type AccessOption<A extends Access> = A extends "open" ? { access?: undefined } : { access: AccessFor<A> };

/** A handler's request on the route `Id`: its caller typed by the route's access (a key route always has its account). */
export type HttpRequest<Body, Id extends RouteId> = BaseRequest<Body> & CallerOf<RouteOf<Id>["access"]>;

/** Pipeline state, on middy's `request.internal` (no side maps). */
type Internal = {
  started: number;
  /** The request's headers, names lower-cased, and its client's address (lib/http/client-address.ts): read once. */
  headers: Readonly<Record<string, string>>;
  clientIp: string;
  body: unknown;
  grant: AccessGrant | null;
  resource: Resource;
  deadline: Deadline;
  clearDeadline: () => void;
  /** Aborts the work now, with `reason` as the deadline signal's. */
  abortWork: (reason: unknown) => void;
  /** When an x402 payment must be settled by: the request's own deadline (the work's ends earlier). */
  settleBy: number;
  /** Headers access control adds to an error answer (rate limits, cost, balance). */
  errorHeaders?: Record<string, string>;
  /** On a public route, the balance read while the work runs (the request cannot change it). */
  balance?: Promise<number | null>;
  /** The work's answer, once it is produced (before the ledger's writes after it). */
  produced?: APIGatewayProxyStructuredResultV2;
};
/** The Lambda context with the pipeline's state, which the last middleware hands to the handler (middy's setToContext pattern). */
type PipelineContext = Context & { pipeline: { internal: Internal } };
type MiddyRequest = Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal>;
type Middleware = MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal>;

/** `application/json`, with or without parameters (a charset). */
const JSON_TYPE = /^application\/json\s*(?:;|$)/i;

/**
 * Parses the raw body: it must be a JSON object, sent as `application/json`, when the endpoint takes
 * one. Any other type is 415: a form or `text/plain` body is what another site's page can make a
 * visitor's browser send without asking (no CORS preflight), and it is never read as JSON.
 */
function parseJsonBody(event: APIGatewayProxyEventV2, headers: Readonly<Record<string, string>>): unknown {
  if (event.body === undefined || event.body === "") throw invalidParams("Invalid request: the body must be a JSON object.");
  const type = headers["content-type"];
  if (!type || !JSON_TYPE.test(type))
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `This endpoint takes a JSON body: send it with Content-Type: application/json${type ? ` (this one was ${JSON.stringify(type.slice(0, 80))})` : ""}.`,
    );
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
function errorResponse(error: unknown, requestId: string): HttpResponse {
  if (error instanceof AppError) {
    if (error.status >= 500) log.error("request failed", { requestId, code: error.code, error: describeError(error) });
    const body = error.body ?? { error: { code: error.code, message: error.message } };
    return { kind: "json", status: error.status, headers: { ...error.headers }, body };
  }
  log.error("unhandled error", { requestId, error: describeError(error) });
  return {
    kind: "json",
    status: 500,
    headers: {},
    body: { error: { code: "INTERNAL_ERROR", message: `Something went wrong on our side. Quote request id ${requestId} if you report it.` } },
  };
}

/** What an x402 payment on this request pays for: this URL, as the client called it; `discovery` describes it for catalogues. */
function resourceOf(event: APIGatewayProxyEventV2, headers: Readonly<Record<string, string>>, route: Route, discovery: () => Discovery | null): Resource {
  return {
    url: `${publicOrigin(headers, event.requestContext.domainName)}${event.rawPath}`,
    description: describe(route),
    mimeType: mimeTypeOf(route),
    ...SERVICE,
    discovery,
  };
}

/** An Idempotency-Key claim outlives its request's deadline by this much before a retry may take it over. */
const LEASE_MARGIN_MS = 5_000;

/** A public route's balance header may come from a read this old (ms). */
const PUBLIC_BALANCE_AGE_MS = 1_000;

/** How long an answer waits for the balance it reports; without it, the header is left out. */
const BALANCE_WAIT_MS = 1_000;

/**
 * Headers an agent can steer by (docs/agents.md): the rate limits the request counted against, what
 * a priced request cost (0 when it failed: refunded or not settled), and an API key's balance after it.
 */
async function steeringHeaders(
  route: Route,
  grant: AccessGrant,
  charged: number,
  deps: AccessDependencies,
  early?: Promise<number | null>,
): Promise<Record<string, string>> {
  // A signed link is seen by whoever holds it (and a CDN shares its answer): the owner's balance,
  // charges and limits are none of their business.
  if (route.access === "signed") return {};
  const balance = grant.account ? await orTimeout(early ?? deps.balanceOf(grant.account.accountId).catch(() => null), BALANCE_WAIT_MS, () => null) : null;
  return {
    ...rateLimitHeaders(grant.rates),
    ...(route.price ? { "X-Charged-Micro-USD": String(charged) } : {}),
    ...(balance === null ? {} : { "X-Balance-Micro-USD": String(balance) }),
  };
}

/** The time-out error of a route: a render's RENDER_TIMEOUT, or the generic TIMEOUT. */
const timeoutError = (route: Route) =>
  route.timeoutCode === "RENDER_TIMEOUT"
    ? new AppError("RENDER_TIMEOUT", "The page did not finish rendering in the time this request has.")
    : new AppError("TIMEOUT", "The request ran out of time before it could finish. Please retry.");

/** Sets the request's deadline (the work's) to `at`, with its signal, which aborts with `reason`. */
function setDeadline(internal: Internal, at: number, reason: Error): void {
  const { signal, clear, abort } = whenAborted(at, reason);
  internal.deadline = { at, signal };
  internal.clearDeadline = clear;
  internal.abortWork = abort;
}

/**
 * Builds the one middy chain every endpoint uses, for the row `options.route` of lib/routes.ts (a
 * wrong id does not compile, and throws as the handler module loads). Order, written down only here:
 *   1. http-context: stamps X-Request-Id (and the row's Cache-Control) on every answer; its onError
 *      is the only place errors become `{error:{code,message}}` responses.
 *   2. json-body + validation: when the endpoint takes a body, parse it (400 when not a JSON object)
 *      and validate it with the endpoint's zod schema (400 INVALID_PARAMS naming field and rule).
 *   3. access (lib/http/access.ts): authentication (401, or 402 on a priced endpoint without
 *      Authorization), rate limits (429; on a route that counts while working, alongside the
 *      handler, whose work a refusal aborts), then the charge. Its `after` settles an x402 payment once
 *      the work succeeded; its onError refunds a charge or frees a payment, whatever failed.
 *      Validation comes first so nobody pays for a request that cannot succeed (docs/api.md).
 *   4. the handler: one lib call returning an HttpResponse, raced against the request's deadline
 *      (lib/deadline.ts; X402_SETTLE_RESERVE_SECONDS earlier when paid with x402, so that settling
 *      has its time): past it, the answer is the row's timeout code.
 * The whole chain is raced once more against answerBy, so that nothing can keep the client from
 * our JSON answer before the gateway's limit.
 */
export function withHttp<Id extends RouteId, S extends z.ZodType | undefined = undefined>(
  options: {
    route: Id;
    schema?: S;
    /** What a request without a body means, on a route whose body is optional. */
    emptyBody?: Record<string, never>;
    discovery?: () => Discovery | null;
  } & AccessOption<RouteOf<Id>["access"]>,
  handler: (request: HttpRequest<S extends z.ZodType ? z.output<S> : undefined, Id>) => Promise<HttpResponse>,
) {
  const route: Route = routeById(options.route);
  // Access control calls only what the route's access takes (AccessFor): a key route's grant never
  // holds a charge, a payment, a cache slot or a claim, so the rest is never reached.
  const deps = (options.access ?? {}) as AccessDependencies;
  const discovery = options.discovery ?? (() => discoveryOf(route));
  const rowHeaders: Record<string, string> = route.noStore ? { "Cache-Control": "no-store" } : {};

  /** The answer for an error: its JSON body, with the row's headers (and what access control adds). */
  const errorResult = (error: unknown, requestId: string, extra: Record<string, string> = {}) => {
    const answer = errorResponse(error, requestId);
    return toApiGatewayResult({ ...answer, headers: { ...rowHeaders, ...extra, ...answer.headers } }, requestId);
  };

  const accessLog = ({ event, response, internal }: MiddyRequest) =>
    log.info("request", {
      requestId: event.requestContext.requestId,
      method: event.requestContext.http.method,
      path: event.rawPath,
      status: response?.statusCode,
      ms: Date.now() - internal.started,
    });

  const httpContext: Middleware = {
    before: ({ event, context, internal }) => {
      internal.started = Date.now();
      internal.headers = lowerCaseHeaders(event);
      internal.clientIp = clientAddress(internal.headers, event.requestContext.http.sourceIp);
      internal.grant = null;
      internal.resource = resourceOf(event, internal.headers, route, discovery);
      // The request's one deadline, fixed as it starts: the Lambda's time and the gateway's 30 s.
      // An x402 request's work ends earlier (access, below); its settling has until this one.
      internal.settleBy = requestDeadline(internal.started, context.getRemainingTimeInMillis(), event.requestContext.timeEpoch);
      setDeadline(internal, internal.settleBy, timeoutError(route));
    },
    after: (request) => {
      request.internal.clearDeadline();
      accessLog(request);
    },
    onError: (request) => {
      request.internal.clearDeadline?.();
      request.response = errorResult(request.error, request.event.requestContext.requestId, request.internal.errorHeaders);
      accessLog(request);
    },
  };

  const body: Middleware = {
    before: ({ event, internal }) => {
      // A GET takes its fields from the query (a signed link), anything else from a JSON body.
      if (options.schema)
        internal.body = validate(
          options.schema,
          event.requestContext.http.method === "GET"
            ? queryBody(event.rawQueryString ?? "", options.schema)
            : options.emptyBody && !event.body
              ? options.emptyBody
              : parseJsonBody(event, internal.headers),
        );
    },
  };

  const accessRequest = ({ event, internal }: MiddyRequest) => ({
    headers: internal.headers,
    body: internal.body,
    requestId: event.requestContext.requestId,
    sourceIp: internal.clientIp,
    at: new Date(event.requestContext.timeEpoch),
    resource: internal.resource,
    leaseUntil: internal.settleBy + LEASE_MARGIN_MS,
    deadline: internal.deadline,
    query: event.rawQueryString ?? "",
  });

  const access: Middleware = {
    before: async (request) => {
      const { internal } = request;
      internal.grant = await authorize(route, accessRequest(request), deps);
      // A public route (metadata: free, open to anyone) cannot change the balance its answer
      // reports, so it is read while the work runs, or taken from a read at most a second old.
      // (A top-up, free too, changes it: read after.)
      const account = internal.grant.account;
      if (route.access === "public" && account) internal.balance = deps.balanceOf(account.accountId, PUBLIC_BALANCE_AGE_MS).catch(() => null);
      // Paid with x402: the work ends early enough that settling always has its reserved time.
      if (internal.grant.payment) {
        internal.clearDeadline();
        setDeadline(internal, internal.settleBy - config.X402_SETTLE_RESERVE_SECONDS * 1000, timeoutError(route));
      }
      (request.context as PipelineContext).pipeline = { internal };
    },
    after: async (request) => {
      const grant = request.internal.grant;
      if (!grant) return;
      const charged = grant.charge?.amount ?? grant.payment?.amount ?? 0;
      // Marking the charge delivered (or settling) and reading the balance are independent: the
      // charge was taken before the work, and delivering it does not move the balance.
      const [receipt, steering] = await Promise.all([
        settle(grant, accessRequest(request), request.internal.settleBy, deps),
        steeringHeaders(route, grant, charged, deps, request.internal.balance),
        endHolding(grant, deps),
      ]);
      const headers = { ...receipt, ...steering };
      await grant.topup;
      request.response = { ...request.response, headers: { ...request.response?.headers, ...headers } };
      const answer = request.response;
      await keepForRetries(grant, answer, request.event.requestContext.requestId, deps);
    },
    onError: async ({ internal }) => {
      if (!internal.grant) return;
      await internal.grant.topup;
      await Promise.all([undo(internal.grant, deps), endHolding(internal.grant, deps)]);
      internal.errorHeaders = await steeringHeaders(route, internal.grant, 0, deps, internal.balance);
    },
  };

  // middy's own early timeout is off: the request's deadline is the one time limit.
  const pipeline = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context, Internal>({ timeoutEarlyInMillis: 0 })
    .use(httpContext)
    .use(body)
    .use(access)
    .handler(async (event, context) => {
      const { internal } = (context as PipelineContext).pipeline;
      const requestId = event.requestContext.requestId;
      const grant = internal.grant;
      // A retry with a used Idempotency-Key: the first answer again, nothing done or charged.
      if (grant?.replay) return deps.replayAnswer(grant.replay, requestId);
      const caller = grant ? { account: grant.account, payer: grant.payer } : {};
      // The process's shared pools (a local stack's pages) count the work as its caller's.
      const tenant = callerOf({ account: grant?.account, payer: grant?.payer?.kind === "x402" ? grant.payer.address : null, ip: internal.clientIp });
      const work = asTenant(tenant, () =>
        handler({
          ...caller,
          body: internal.body,
          headers: internal.headers,
          requestId,
          sourceIp: internal.clientIp,
          domain: event.requestContext.domainName,
          method: event.requestContext.http.method,
          path: event.rawPath,
          params: (event.pathParameters ?? {}) as Record<string, string>,
          route,
          resource: internal.resource,
          deadline: internal.deadline,
          cache: grant?.cache ?? null,
        } as HttpRequest<never, Id>),
      );
      // Past the deadline the answer is the timeout; work that ignored the signal is let go.
      work.catch(() => undefined);
      const outcome = Promise.race([work, aborted(internal.deadline.signal)]);
      // A route that counts its limits while working: over a limit the work is aborted, and the
      // 429 is the answer whatever the work did.
      if (grant?.counting) {
        outcome.catch(() => undefined);
        grant.counting.catch((refusal: unknown) => internal.abortWork(refusal));
        await grant.counting;
      }
      const response = await outcome;
      internal.produced = toApiGatewayResult({ ...response, headers: { ...rowHeaders, ...response.headers } }, requestId);
      return internal.produced;
    });

  // The last line of defence: whatever hangs outside the work's race (a table that stopped
  // answering during authentication or a refund, a facilitator), the client gets our JSON answer
  // before the gateway's limit. What still runs is let go: a charge it leaves behind is refunded,
  // a settlement confirmed, by the reconciler. Work that had produced its answer is answered with
  // it: the writes after it (the delivery mark) may still land, and a delivered charge is never
  // refunded, so the customer must get what it paid for.
  return async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => {
    const requestId = event.requestContext.requestId;
    const stopAt = answerBy(Date.now(), context.getRemainingTimeInMillis(), event.requestContext.timeEpoch);
    return orTimeout(pipeline(event, context), stopAt - Date.now(), () => {
      const produced = (context as Partial<PipelineContext>).pipeline?.internal.produced;
      log.error(`request did not finish in time; answered ${produced ? "with its output, without the rest" : "without it"}`, {
        requestId,
        path: event.rawPath,
      });
      return produced ?? errorResult(timeoutError(route), requestId);
    });
  };
}
