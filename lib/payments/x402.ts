import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { documents } from "../billing/dynamodb.js";
import { paymentKey } from "../billing/keys.js";
import { config } from "../config.js";
import { invalidParams } from "../errors.js";
import { describeError, log } from "../log.js";
import { getFacilitator } from "./facilitator.js";
import { MAX_TIMEOUT_SECONDS, paymentRequired, type Resource, requirementsV1, requirementsV2 } from "./requirements.js";

const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** The payment-identifier id a request's payment carries (x402 v2), or null; 400 when it is not 16 to 128 letters, digits, "-" or "_". */
export function paymentIdentifierOf(headers: Readonly<Record<string, string>>): string | null {
  const sent = readPayment(headers);
  if (sent === null || typeof sent === "string") return null;
  const id = (sent.payload.extensions?.["payment-identifier"] as { info?: { id?: unknown } } | undefined)?.info?.id;
  if (id === undefined) return null;
  if (typeof id !== "string" || !PAYMENT_ID.test(id)) throw invalidParams('payment-identifier: the id must be 16 to 128 letters, digits, "-" or "_".');
  return id;
}

/** A payment that verified, to be settled once the work succeeded. */
export interface VerifiedPayment {
  readonly version: 1 | 2;
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly payer: string;
  readonly amount: number;
  readonly authorization: Authorization;
  /** The authorisation's id: its reservation (PAY#id) stops it from paying twice. */
  readonly id: string;
  /** The request it pays for. */
  readonly requestId: string;
}

/** An EIP-3009 authorisation as the exact EVM scheme carries it. */
export interface Authorization {
  readonly from: string;
  readonly to: string;
  readonly value: string;
  readonly nonce: string;
  readonly validBefore: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]+$/;
const UINT = /^(?:0|[1-9][0-9]{0,77})$/;

/** How often one authorisation may be presented in all, when the requests it was reserved for failed. */
export const MAX_PRESENTATIONS = 3;
/** A reservation outlives its authorisation's validity by a day (then TTL removes it: the chain refuses the authorisation anyway). */
const RESERVATION_KEPT_SECONDS = 86_400;

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
  return { from: auth.from, to: auth.to, value: auth.value as string, nonce: auth.nonce, validBefore: auth.validBefore as string };
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
  const result = await getFacilitator()
    .then((facilitator) => facilitator.verify(sent.payload, requirements))
    .catch((error: unknown) => {
      // A payload the facilitator cannot even read, or a facilitator that answers 4xx: the payment is refused, not our failure.
      log.warn("payment verification failed", { requestId, error: describeError(error) });
      throw paymentRequired(amount, resource, "the payment could not be verified");
    });
  if (!result.isValid) throw paymentRequired(amount, resource, result.invalidReason ?? "the payment is not valid");

  const { from, nonce, validBefore } = sent.authorization;
  const id = createHash("sha256").update([requirements.network, requirements.asset, from, nonce].join("|").toLowerCase()).digest("hex");
  const refused = await reserve(id, { requestId, payer: result.payer ?? from, amount, validBefore });
  if (refused) throw paymentRequired(amount, resource, refused);
  return { version: sent.version, payload: sent.payload, requirements, payer: result.payer ?? from, amount, authorization: sent.authorization, id, requestId };
}

/**
 * Reserves authorisation `id` for `request`: only if it was never seen, or was released by requests
 * that failed fewer than MAX_PRESENTATIONS times (so a payment cannot be replayed without limit to
 * make us work for nothing). The reservation lasts until a day past the authorisation's validity.
 * Null when reserved, else why not.
 */
async function reserve(id: string, request: { requestId: string; payer: string; amount: number; validBefore: string }): Promise<string | null> {
  const expiresAt = Number(BigInt(request.validBefore) + BigInt(RESERVATION_KEPT_SECONDS));
  try {
    await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: paymentKey(id),
        UpdateExpression:
          "SET #state = :reserved, requestId = :request, payer = :payer, amount = :amount, updatedAt = :now, expiresAt = :expires ADD presentations :one",
        ConditionExpression: "attribute_not_exists(pk) OR (#state = :released AND presentations < :max)",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: {
          ":reserved": "reserved",
          ":released": "released",
          ":request": request.requestId,
          ":payer": request.payer,
          ":amount": request.amount,
          ":now": new Date().toISOString(),
          ":expires": expiresAt,
          ":one": 1,
          ":max": MAX_PRESENTATIONS,
        },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const old = error.Item;
    return old?.state?.S === "released"
      ? `this authorization was presented ${old.presentations?.N} times for requests that failed; sign a new one`
      : "this payment was already used";
  }
  return null;
}

/**
 * The update that moves this request's own reservation of `payment` on from "reserved" to `state`
 * ("released": free to be presented again; "settling": never released again, its transfer may be in flight).
 */
export function leaveReserved(payment: VerifiedPayment, state: "released" | "settling") {
  return {
    TableName: config.TABLE_NAME,
    Key: paymentKey(payment.id),
    UpdateExpression: "SET #state = :state",
    ConditionExpression: "requestId = :request AND #state = :reserved",
    ExpressionAttributeNames: { "#state": "state" },
    ExpressionAttributeValues: { ":state": state, ":reserved": "reserved", ":request": payment.requestId },
  };
}

/** Frees a payment whose work failed: its authorisation was never used and may be presented again (MAX_PRESENTATIONS in all). */
export async function releasePayment(payment: VerifiedPayment): Promise<void> {
  try {
    await documents.send(new UpdateCommand(leaveReserved(payment, "released")));
  } catch (error) {
    // Not this request's, or settling began: nothing to free.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
