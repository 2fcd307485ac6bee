import type { MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { authenticate, type Account } from "../billing/accounts.js";
import { unauthorized } from "../billing/errors.js";
import { chargeForRequest, refundCharge, type Charge } from "../billing/ledger.js";
import { enforceRateLimit } from "../billing/rate-limit.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import type { Route } from "../routes.js";
import { lowerCaseHeaders } from "./headers.js";
import { releasePayment, settlePayment, verifyPayment, type Resource, type VerifiedPayment } from "../payments/x402.js";

/** Who is calling and how they pay, for the handler, the settlement, and the refund on failure. */
export interface AccessState {
  account: Account | null;
  charge: Charge | null;
  payment: VerifiedPayment | null;
}

/** What an x402 payment on this request pays for. */
export function resourceOf(event: APIGatewayProxyEventV2, route: Route): Resource {
  const headers = lowerCaseHeaders(event);
  return {
    url: `${headers["x-forwarded-proto"] ?? "http"}://${headers.host ?? event.requestContext.domainName}${event.rawPath}`,
    description: `Shotline ${route.id} (${route.method} ${route.path})`,
    mimeType: "image/png",
  };
}

/** The price of a priced request: the mockup price when the body asks for a mockup. */
export const priceOf = (route: Route, body: unknown): number =>
  route.price ? ((body as { style?: string } | undefined)?.style === "mockup" ? route.price.mockup : route.price.standard) : 0;

/**
 * Authentication, rate limit and charge, in SPEC.md's order (after validation, before the work):
 * "priced": a key is charged the request's price, or, without Authorization, an x402 payment is
 * verified (402 with requirements when there is none) and settled in `after` once the work
 * succeeded; "key": a key is required (401 without); "public": anyone, limited per key when one is
 * sent, else per client IP; signup also per IP per hour. onError refunds a charge and frees an
 * unsettled payment, whatever failed.
 */
export function accessControl(
  route: Route | undefined,
  state: WeakMap<APIGatewayProxyEventV2, AccessState>,
  bodyOf: (event: APIGatewayProxyEventV2) => unknown,
): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    before: async ({ event }) => {
      const access: AccessState = { account: null, charge: null, payment: null };
      state.set(event, access);
      if (!route || route.access === "open") return;
      const headers = lowerCaseHeaders(event);
      const authorization = headers.authorization;
      const sourceIp = event.requestContext.http.sourceIp;
      if (authorization === undefined && route.access === "priced") {
        // x402: no account. The IP is limited before the facilitator is asked anything; the payer after.
        await enforceRateLimit(`ip:${sourceIp}`, config.RATE_LIMIT_PER_SECOND);
        access.payment = await verifyPayment(headers, priceOf(route, bodyOf(event)), resourceOf(event, route), event.requestContext.requestId);
        await enforceRateLimit(`payer:${access.payment.payer.toLowerCase()}`, config.RATE_LIMIT_PER_SECOND);
        return;
      }
      if (authorization === undefined && route.access === "key") throw unauthorized();
      if (authorization !== undefined) access.account = await authenticate(authorization);

      if (route.id === "signup") await enforceRateLimit(`signup-ip:${sourceIp}`, config.SIGNUP_LIMIT_PER_HOUR, 3600);
      const account = access.account;
      await enforceRateLimit(account ? `acct:${account.accountId}` : `ip:${sourceIp}`, account?.rateLimitPerSecond ?? config.RATE_LIMIT_PER_SECOND);

      if (route.access === "priced" && account) {
        access.charge = await chargeForRequest(account.accountId, priceOf(route, bodyOf(event)), {
          requestId: event.requestContext.requestId,
          endpoint: route.id,
          at: new Date(event.requestContext.timeEpoch),
        });
      }
    },
    after: async (request) => {
      const payment = state.get(request.event)?.payment;
      if (!payment || !route) return;
      // Settle only now that the work succeeded; the receipt travels in the response header.
      const headers = await settlePayment(payment, resourceOf(request.event, route), request.event.requestContext.requestId);
      state.get(request.event)!.payment = null;
      request.response = { ...request.response, headers: { ...(request.response as { headers?: Record<string, string> })?.headers, ...headers } };
    },
    onError: async ({ event }) => {
      const access = state.get(event);
      // A payment that was never settled: the signature may pay again.
      if (access?.payment) await releasePayment(access.payment).catch((error: unknown) => log.error("releasing a payment failed", { error: describeError(error) }));
      const charge = access?.charge;
      if (!charge) return;
      try {
        await refundCharge(charge);
      } catch (error) {
        // The customer was charged for a failed request and the refund did not go through: loud,
        // with everything an operator needs to put it right.
        log.error("refund failed", { requestId: charge.requestId, accountId: charge.accountId, amount: charge.amount, error: describeError(error) });
      }
    },
  };
}
