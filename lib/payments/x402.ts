import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { documents } from "../billing/dynamodb.js";
import { paymentKey, settlementKey } from "../billing/keys.js";
import { formatUsd } from "../billing/money.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { log } from "../log.js";
import { getFacilitator } from "./facilitator.js";

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
  // anything else): with/http.ts answers `{ x402Version, error: message, accepts, code }` for it.
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

/** The payment a request carries: PAYMENT-SIGNATURE (v2, which wins) or X-PAYMENT (v1); null when it carries none, "malformed" when it is not base64 x402 JSON. */
export function readPayment(headers: Readonly<Record<string, string>>): { version: 1 | 2; payload: PaymentPayload } | "malformed" | null {
  const raw = headers["payment-signature"] ?? headers["x-payment"];
  if (raw === undefined) return null;
  try {
    const payload = JSON.parse(Buffer.from(raw, "base64").toString("utf8")) as PaymentPayload;
    if (typeof payload !== "object" || payload === null || !("payload" in payload)) return "malformed";
    return { version: headers["payment-signature"] !== undefined ? 2 : 1, payload };
  } catch {
    return "malformed";
  }
}

/**
 * Checks the payment a request carries for `amount`; 402 (with fresh requirements and the reason)
 * when there is none, it is malformed, invalid, under-priced, for another network or asset, or
 * was already used. The signature is reserved in DynamoDB so it cannot pay for two requests.
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
  if (sent === "malformed") throw paymentRequired(amount, resource, "the payment header is not base64-encoded x402 JSON");
  const requirements = (sent.version === 2 ? requirementsV2(amount) : requirementsV1(amount, resource)) as PaymentRequirements;
  const result = await getFacilitator().verify(sent.payload, requirements);
  if (!result.isValid) throw paymentRequired(amount, resource, result.invalidReason ?? "the payment is not valid");

  const signature = createHash("sha256").update(JSON.stringify(sent.payload.payload)).digest("hex");
  const reservation = paymentKey(signature);
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
  return { version: sent.version, payload: sent.payload, requirements, payer: result.payer ?? "unknown", amount, reservation };
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
