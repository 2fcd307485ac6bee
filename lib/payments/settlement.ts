import { setTimeout as sleep } from "node:timers/promises";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { SettleResponse } from "@x402/core/types";
import { documents, queryPages, transact } from "../billing/dynamodb.js";
import { paymentKey, type TableKey, UNCONFIRMED_PARTITION, UNCONFIRMED_SKEW_SECONDS, unconfirmedKey } from "../billing/keys.js";
import { recordTransfer, type TransactItem } from "../billing/ledger.js";
import { config } from "../config.js";
import { orTimeout } from "../deadline.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { transferOf } from "./chain.js";
import { getFacilitator } from "./facilitator.js";
import { encode, paymentRequired, type Resource } from "./requirements.js";
import { leaveReserved, releasePayment, type VerifiedPayment } from "./x402.js";

// Settling an x402 payment so that whatever happens (a slow or failing facilitator, a transfer left
// pending, the process killed, DynamoDB gone) no money is lost and none is taken twice:
//   1. Before the facilitator is asked, an UNCONFIRMED marker records what the payment is for (and
//      the reservation moves to "settling": it can no longer be released and presented again).
//   2. The facilitator gets what is left of the request's time, at most X402_SETTLE_TIMEOUT_SECONDS.
//      Settled: the transfer is recorded (create-only SETTLE#<tx>, a top-up credited in the same
//      transaction) and the marker deleted. Refused: the marker is deleted and the payment released.
//   3. Pending, timed out or failing: the chain is asked (the authorisation's state, then its
//      transfer) until the time is up. Paid: as settled. Not yet: the render's output is delivered
//      (the payer may have paid: they must not pay for nothing) and a top-up answers "pending"; the
//      marker stays for the reconciler, which confirms it on chain (the transfer is recorded and a
//      top-up credited, once) or, past the authorisation's validity, closes it unpaid.

/** The facilitator's answer for a broadcast transfer whose receipt it did not wait for (x402's reason). */
const SETTLEMENT_PENDING = "settlement_pending";
/** Settling is not started with less time than this left (the payer keeps the money; the request answers TIMEOUT). */
const MIN_SETTLE_MS = 1_000;
/** How often the chain is asked while a settlement is pending. */
const CHAIN_POLL_MS = 1_000;
/** The end of the settling time kept for asking the chain, when the facilitator has not answered by then (at most a quarter of it). */
const CHAIN_CHECK_MS = 2_000;

/** What a payment buys: a render (the output), or credit on an account. */
export type Purpose = { readonly kind: "render" } | { readonly kind: "topup"; readonly accountId: string };

/** The outcome of settling: "settled" (the transfer is recorded) or "pending" (the reconciler will confirm it); and the receipt header. */
export interface Settlement {
  readonly state: "settled" | "pending";
  readonly transaction: string | null;
  readonly headers: Record<string, string>;
}

/** A settlement awaiting the chain, as its UNCONFIRMED marker holds it. */
interface Marker extends TableKey {
  readonly paymentId: string;
  readonly requestId: string;
  readonly at: string;
  readonly accountId: string | null;
  readonly amount: number;
  readonly payer: string;
  readonly network: string;
  readonly from: string;
  readonly nonce: string;
  readonly to: string;
  readonly value: string;
  readonly validBefore: string;
  readonly transaction?: string;
}

/** Where every answer's receipt goes: PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1). */
const receipt = (payment: VerifiedPayment, response: SettleResponse) => ({
  [payment.version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE"]: encode(response),
});

/** The items that close a marker in the same transaction as what decided it. */
function closing(marker: Marker, state: "settled" | "released" | "expired", transaction?: string): TransactItem[] {
  return [
    { Delete: { TableName: config.TABLE_NAME, Key: { pk: marker.pk, sk: marker.sk } } },
    {
      Update: {
        TableName: config.TABLE_NAME,
        Key: paymentKey(marker.paymentId),
        UpdateExpression: `SET #state = :state${transaction ? ", #transaction = :transaction" : ""}`,
        ExpressionAttributeNames: { "#state": "state", ...(transaction ? { "#transaction": "transaction" } : {}) },
        ExpressionAttributeValues: { ":state": state, ...(transaction ? { ":transaction": transaction } : {}) },
      },
    },
  ];
}

/** Records a marker's transfer (a top-up credited), once, and closes the marker. */
async function confirm(marker: Marker, transaction: string): Promise<void> {
  const recorded = await recordTransfer(
    {
      transaction,
      payer: marker.payer,
      amount: marker.amount,
      network: marker.network,
      requestId: marker.requestId,
      at: new Date(marker.at),
      paymentId: marker.paymentId,
      accountId: marker.accountId,
    },
    closing(marker, "settled", transaction),
  );
  // Recorded by someone else already (the request and the reconciler both saw it mined): just close the marker.
  if (!recorded) await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: marker.pk, sk: marker.sk } }));
}

/** Step 1: the marker, and the reservation moved from "reserved" to "settling" (it can no longer be released). */
async function open(payment: VerifiedPayment, purpose: Purpose, at: Date): Promise<Marker> {
  const marker: Marker = {
    ...unconfirmedKey(at, payment.id),
    paymentId: payment.id,
    requestId: payment.requestId,
    at: at.toISOString(),
    accountId: purpose.kind === "topup" ? purpose.accountId : null,
    amount: payment.amount,
    payer: payment.payer,
    network: payment.requirements.network,
    ...payment.authorization,
  };
  await transact({
    TransactItems: [{ Put: { TableName: config.TABLE_NAME, Item: marker } }, { Update: leaveReserved(payment, "settling") }],
  });
  return marker;
}

/** The chain's answer for `marker` until `until` (epoch ms): its transaction once paid, else null. */
async function paidBy(marker: Marker, until: number): Promise<string | null> {
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) return null;
    const found = await orTimeout(transferOf(marker), left, () => null).catch((error: unknown) => {
      log.warn("reading the chain failed", { requestId: marker.requestId, error: describeError(error) });
      return null;
    });
    if (found?.state === "paid") return found.transaction;
    if (found?.state === "elsewhere") return null;
    await sleep(Math.min(CHAIN_POLL_MS, Math.max(0, until - Date.now())));
  }
}

/**
 * Settles `payment` for `purpose` by `settleBy` (epoch ms: the request's deadline), as described
 * above. Throws TIMEOUT when there is no time left to start (the payment is released: the payer
 * keeps the money) and 402 when the facilitator refuses the payment.
 */
export async function settlePayment(
  payment: VerifiedPayment,
  purpose: Purpose,
  request: { resource: Resource; at: Date },
  settleBy: number,
): Promise<Settlement> {
  const { requestId } = payment;
  const budget = Math.min(config.X402_SETTLE_TIMEOUT_SECONDS * 1000, settleBy - Date.now());
  let marker: Marker;
  try {
    if (budget < MIN_SETTLE_MS) throw new AppError("TIMEOUT", "There was no time left to settle the payment; it was not taken. Please retry.");
    marker = await open(payment, purpose, request.at);
  } catch (error) {
    // Nothing was sent to be settled: the payer keeps the money, and the authorisation is free again.
    await releasePayment(payment).catch((cause: unknown) => log.error("releasing a payment failed", { requestId, error: describeError(cause) }));
    throw error;
  }
  const until = Date.now() + budget;
  const result = await orTimeout(
    getFacilitator()
      .then((facilitator) => facilitator.settle(payment.payload, payment.requirements))
      .catch((error: unknown) => {
        log.warn("the facilitator failed to settle", { requestId, error: describeError(error) });
        return null;
      }),
    budget - Math.min(CHAIN_CHECK_MS, budget / 4),
    () => null,
  );
  if (result && !result.success && result.errorReason !== SETTLEMENT_PENDING) {
    // Refused outright (nothing was broadcast): the payer keeps the money and may pay again.
    log.warn("settlement refused", { requestId, payer: payment.payer, reason: result.errorReason });
    await transact({ TransactItems: closing(marker, "released") });
    throw paymentRequired(payment.amount, request.resource, result.errorReason ?? "the payment could not be settled");
  }
  const transaction = result?.success ? result.transaction : await paidBy(marker, until);
  if (transaction) {
    try {
      await confirm(marker, transaction);
      return {
        state: "settled",
        transaction,
        headers: receipt(payment, { success: true, transaction, network: payment.requirements.network, payer: payment.payer }),
      };
    } catch (error) {
      // The money moved but could not be recorded (DynamoDB): the marker stays, the reconciler records it.
      log.error("a settled payment could not be recorded", { requestId, transaction, error: describeError(error) });
    }
  } else if (result?.transaction) {
    await documents
      .send(
        new UpdateCommand({
          TableName: config.TABLE_NAME,
          Key: { pk: marker.pk, sk: marker.sk },
          UpdateExpression: "SET #transaction = :transaction",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#transaction": "transaction" },
          ExpressionAttributeValues: { ":transaction": result.transaction },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) log.warn("noting a pending transaction failed", { requestId, error: describeError(error) });
      });
  }
  log.warn("settlement pending: the reconciler confirms it on chain", { requestId, payer: payment.payer, transaction: transaction ?? result?.transaction });
  const pending: SettleResponse = {
    success: false,
    errorReason: SETTLEMENT_PENDING,
    transaction: transaction ?? result?.transaction ?? "",
    network: payment.requirements.network,
    payer: payment.payer,
  };
  return { state: "pending", transaction: pending.transaction || null, headers: receipt(payment, pending) };
}

/**
 * Confirms every pending settlement on chain: mined to us, it is recorded (a top-up credited), once;
 * never mined past the authorisation's validity (or its nonce spent elsewhere), it is closed unpaid.
 * Safe to run at the same time as a request that is settling, and twice at once. Returns how many it
 * confirmed and closed, and how many are still pending after it.
 */
export async function confirmSettlements(now: number, signal?: AbortSignal): Promise<{ confirmed: number; expired: number; pending: number }> {
  let confirmed = 0;
  let expired = 0;
  let seen = 0;
  for await (const page of queryPages(
    { KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": UNCONFIRMED_PARTITION }, ConsistentRead: true },
    signal,
  )) {
    for (const marker of (page.Items ?? []) as Marker[]) {
      seen++;
      try {
        const found = await transferOf(marker);
        if (found.state === "paid") {
          await confirm(marker, found.transaction);
          confirmed++;
        } else if (found.state === "elsewhere" || BigInt(Math.floor(now / 1000)) > BigInt(marker.validBefore) + BigInt(UNCONFIRMED_SKEW_SECONDS)) {
          log.warn("an x402 payment was never settled", { requestId: marker.requestId, payer: marker.payer, amount: marker.amount, state: found.state });
          await transact({ TransactItems: closing(marker, "expired") });
          expired++;
        }
      } catch (error) {
        // The next run tries again; one unreadable marker does not hold up the others.
        log.error("confirming a settlement failed", { requestId: marker.requestId, error: describeError(error) });
      }
    }
  }
  return { confirmed, expired, pending: seen - confirmed - expired };
}
