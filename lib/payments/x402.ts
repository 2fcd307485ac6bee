import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { documents } from "../billing/dynamodb.js";
import { paymentKey, settlementKey } from "../billing/keys.js";
import { formatUsd } from "../billing/money.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { type Facilitator, getFacilitator } from "./facilitator.js";

// x402: pay per request in USDC, no account. A priced request without Authorization gets 402 with
// the requirements for its own price, both as x402 v2 (PAYMENT-REQUIRED header) and v1 (body
// `accepts`); the client retries with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1). We verify before
// the work and settle only after it succeeded, so a failed render costs the payer nothing.

const MAX_TIMEOUT_SECONDS = 120;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

/** The resource being paid for. */
export interface Resource {
  readonly url: string;
  readonly description: string;
  readonly mimeType: string;
}

/** v2 requirements for `amount` micro-USD (= USDC atomic units: both have 6 decimals). */
export function requirementsV2(amount: number): PaymentRequirements {
  return {
    scheme: "exact",
    network: config.X402_NETWORK as PaymentRequirements["network"],
    asset: config.X402_ASSET,
    amount: String(amount),
    payTo: config.X402_PAY_TO!,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: config.X402_ASSET_NAME, version: config.X402_ASSET_VERSION },
  };
}

/** v1 requirements (x402 v1 names its networks and carries the resource in each entry). */
export function requirementsV1(amount: number, resource: Resource) {
  return {
    scheme: "exact",
    network: config.X402_V1_NETWORK,
    maxAmountRequired: String(amount),
    resource: resource.url,
    description: resource.description,
    mimeType: resource.mimeType,
    payTo: config.X402_PAY_TO!,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: config.X402_ASSET,
    extra: { name: config.X402_ASSET_NAME, version: config.X402_ASSET_VERSION },
  };
}

/** 402 with how to pay `amount` for `resource`; `reason` says why a payment that was sent was refused. */
export function paymentRequired(amount: number, resource: Resource, reason?: string): AppError {
  if (!config.X402_PAY_TO) {
    return new AppError(
      "PAYMENT_REQUIRED",
      "This endpoint is paid per request: send Authorization: Bearer <API key> (x402 is not enabled on this deployment).",
    );
  }
  const message = `${reason ? `Payment refused: ${reason}. ` : ""}This request costs ${formatUsd(amount)}: pay with x402 (USDC) or send Authorization: Bearer <API key>.`;
  // The body is an x402 v1 PaymentRequired, whose `error` is a string (strict v1 clients refuse
  // anything else): http/with-http.ts answers `{ x402Version, error: message, accepts, code }` for it.
  return new AppError("PAYMENT_REQUIRED", message, {
    headers: {
      "PAYMENT-REQUIRED": encode({ x402Version: 2, error: reason ?? "payment required", resource, accepts: [requirementsV2(amount)] }),
      "Cache-Control": "no-store",
    },
    body: { x402Version: 1, accepts: [requirementsV1(amount, resource)] },
  });
}

/** A payment that verified, to be settled once the work succeeded. */
export interface VerifiedPayment {
  readonly version: 1 | 2;
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly payer: string;
  readonly amount: number;
  /** The reservation that stops the same signature from paying twice. */
  readonly reservation: { pk: string; sk: string };
}

/** An EIP-3009 authorisation as the exact EVM scheme carries it. */
interface Authorization {
  readonly from: string;
  readonly nonce: string;
  readonly validBefore: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]+$/;
const UINT = /^(?:0|[1-9][0-9]{0,77})$/;

/** A payment's validity may reach this far past now: the requirements' own timeout, and a minute of clock skew. */
const MAX_VALID_FOR_SECONDS = MAX_TIMEOUT_SECONDS + 60;

/** The exact-EVM authorisation in `payload`, or why it is not one (x402 v1 and v2 carry the same inner payload). */
function authorizationOf(payload: unknown): Authorization | string {
  const inner = (payload as { payload?: { signature?: unknown; authorization?: Record<string, unknown> } }).payload;
  const auth = inner?.authorization;
  if (typeof inner?.signature !== "string" || !SIGNATURE.test(inner.signature) || typeof auth !== "object" || auth === null) {
    return "the payment is not an exact EVM authorization (payload.signature and payload.authorization)";
  }
  if (typeof auth.from !== "string" || !ADDRESS.test(auth.from) || typeof auth.to !== "string" || !ADDRESS.test(auth.to)) {
    return "the authorization's from and to must be addresses";
  }
  if (typeof auth.nonce !== "string" || !NONCE.test(auth.nonce)) return "the authorization's nonce must be 32 bytes of hex";
  for (const field of ["value", "validAfter", "validBefore"] as const) {
    if (typeof auth[field] !== "string" || !UINT.test(auth[field])) return `the authorization's ${field} must be a decimal string`;
  }
  return { from: auth.from, nonce: auth.nonce, validBefore: auth.validBefore as string };
}

/** The payment a request carries: PAYMENT-SIGNATURE (v2, which wins) or X-PAYMENT (v1); null when it carries none, else why it is malformed. */
export function readPayment(
  headers: Readonly<Record<string, string>>,
): { version: 1 | 2; payload: PaymentPayload; authorization: Authorization } | string | null {
  const raw = headers["payment-signature"] ?? headers["x-payment"];
  if (raw === undefined) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
  } catch {
    return "the payment header is not base64-encoded x402 JSON";
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return "the payment header is not base64-encoded x402 JSON";
  const version = headers["payment-signature"] !== undefined ? 2 : 1;
  if ((payload as { x402Version?: unknown }).x402Version !== version) {
    return `the payment says x402Version ${JSON.stringify((payload as { x402Version?: unknown }).x402Version)}; ${version === 2 ? "PAYMENT-SIGNATURE carries version 2" : "X-PAYMENT carries version 1"}`;
  }
  const authorization = authorizationOf(payload);
  if (typeof authorization === "string") return authorization;
  return { version, payload: payload as PaymentPayload, authorization };
}

/**
 * Checks the payment a request carries for `amount`; 402 (with fresh requirements and the reason)
 * when there is none, it is malformed, invalid, under-priced, for another network or asset, valid
 * for too long, refused by the facilitator, or was already used. The authorisation itself (network,
 * asset, payer, nonce: however it is serialised) is reserved in DynamoDB so it pays for one request.
 */
export async function verifyPayment(
  headers: Readonly<Record<string, string>>,
  amount: number,
  resource: Resource,
  requestId: string,
): Promise<VerifiedPayment> {
  if (!config.X402_PAY_TO) throw paymentRequired(amount, resource);
  const sent = readPayment(headers);
  if (sent === null) throw paymentRequired(amount, resource);
  if (typeof sent === "string") throw paymentRequired(amount, resource, sent);
  if (BigInt(sent.authorization.validBefore) > BigInt(Math.floor(Date.now() / 1000) + MAX_VALID_FOR_SECONDS)) {
    throw paymentRequired(amount, resource, `the authorization is valid for longer than ${MAX_VALID_FOR_SECONDS} s`);
  }
  const requirements = (sent.version === 2 ? requirementsV2(amount) : requirementsV1(amount, resource)) as PaymentRequirements;
  let result: Awaited<ReturnType<Facilitator["verify"]>>;
  try {
    result = await getFacilitator().verify(sent.payload, requirements);
  } catch (error) {
    // A payload the facilitator cannot even read, or a facilitator that answers 4xx: the payment is refused, not our failure.
    log.warn("payment verification failed", { requestId, error: describeError(error) });
    throw paymentRequired(amount, resource, "the payment could not be verified");
  }
  if (!result.isValid) throw paymentRequired(amount, resource, result.invalidReason ?? "the payment is not valid");

  const { from, nonce } = sent.authorization;
  const id = createHash("sha256").update([requirements.network, requirements.asset, from, nonce].join("|").toLowerCase()).digest("hex");
  const reservation = paymentKey(id);
  try {
    await documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...reservation, requestId, payer: result.payer, amount, createdAt: new Date().toISOString() },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw paymentRequired(amount, resource, "this payment was already used");
    throw error;
  }
  return { version: sent.version, payload: sent.payload, requirements, payer: result.payer ?? from, amount, reservation };
}

/** Frees a reservation when the work failed: the signature was never settled and may be used again. */
export async function releasePayment(payment: VerifiedPayment): Promise<void> {
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: payment.reservation }));
}

/** Settles a verified payment after the work succeeded; returns the response header to send. */
export async function settlePayment(payment: VerifiedPayment, resource: Resource, requestId: string): Promise<Record<string, string>> {
  const result = await getFacilitator().settle(payment.payload, payment.requirements);
  if (!result.success) {
    log.warn("settlement failed", { requestId, payer: payment.payer, reason: result.errorReason });
    throw paymentRequired(payment.amount, resource, result.errorReason ?? "the payment could not be settled");
  }
  await documents.send(
    new PutCommand({
      TableName: config.TABLE_NAME,
      Item: {
        ...settlementKey(result.transaction),
        payer: result.payer ?? payment.payer,
        amount: payment.amount,
        network: result.network,
        requestId,
        createdAt: new Date().toISOString(),
      },
    }),
  );
  return { [payment.version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE"]: encode(result) };
}
