import type { MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { authenticate, type Account } from "../billing/accounts.js";
import { unauthorized } from "../billing/errors.js";
import { chargeForRequest, refundCharge, type Charge } from "../billing/ledger.js";
import { enforceRateLimit } from "../billing/rate-limit.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import type { Route } from "../routes.js";
import { AppError } from "./errors.js";

/** Who is calling and what they were charged, for the handler and for the refund on failure. */
export interface AccessState {
  account: Account | null;
  charge: Charge | null;
}

/** 402 for a priced request without Authorization (x402 fills in how to pay). */
export const paymentRequired = () =>
  new AppError("PAYMENT_REQUIRED", "This endpoint is paid per request: send Authorization: Bearer <API key>, or pay with x402.");

/** The price of a priced request: the mockup price when the body asks for a mockup. */
export const priceOf = (route: Route, body: unknown): number =>
  route.price ? ((body as { style?: string } | undefined)?.style === "mockup" ? route.price.mockup : route.price.standard) : 0;

const header = (event: APIGatewayProxyEventV2, name: string) => {
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
};

/**
 * Authentication, rate limit and charge, in SPEC.md's order (after validation, before the work):
 * "priced": a key is charged the request's price (402 without Authorization); "key": a key is
 * required (401 without); "public": anyone, limited per key when one is sent, else per client IP;
 * signup also per IP per hour. A failure after the charge is refunded in onError, whatever it was.
 */
export function accessControl(
  route: Route | undefined,
  state: WeakMap<APIGatewayProxyEventV2, AccessState>,
  bodyOf: (event: APIGatewayProxyEventV2) => unknown,
): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    before: async ({ event }) => {
      const access: AccessState = { account: null, charge: null };
      state.set(event, access);
      if (!route || route.access === "open") return;
      const authorization = header(event, "authorization");
      if (authorization === undefined && route.access === "priced") throw paymentRequired();
      if (authorization === undefined && route.access === "key") throw unauthorized();
      if (authorization !== undefined) access.account = await authenticate(authorization);

      const sourceIp = event.requestContext.http.sourceIp;
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
    onError: async ({ event }) => {
      const charge = state.get(event)?.charge;
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
