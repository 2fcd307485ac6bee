import { createHash } from "node:crypto";
import type { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { QueryCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents, queryPages, transact, transactionConditionFailed } from "./dynamodb.js";
import { dailyLimitReached, insufficientBalance } from "./errors.js";
import { fromHold } from "./holds.js";
import { accountKey, PENDING_PARTITION, pendingKey, settlementKey, signingKeySpendKey, type TableKey, USAGE_PREFIX, usageKey } from "./keys.js";

// The ledger: every change of a balance is one DynamoDB transaction that moves the balance and
// writes (or updates) the usage entry explaining it, so the two can never disagree.
//
// A charge ends in a known state whatever happens to the process: it is written with a PENDING
// marker, which its delivery (the response was produced) or its refund deletes in the same
// transaction. A marker older than the grace period belongs to a request that died (a crash, an
// out-of-memory kill, a hard timeout): the reconciler refunds it.

/** A charge that went through, needed to deliver or refund it. */
export interface Charge {
  readonly accountId: string;
  readonly amount: number;
  readonly entry: TableKey;
  readonly requestId: string;
  /** Its PENDING marker. */
  readonly pending: TableKey;
  /** The day's spend of the signing key whose link it was charged for, when that key has a daily limit. */
  readonly spend?: TableKey;
}

/** A signing key's daily limit (docs/api.md, "Signed links"): its id and the most its links may be charged a UTC day, in micro-USD. */
export interface SpendCap {
  readonly keyId: string;
  readonly limit: number;
}

/** A day's spend record is kept this long after the day ends (then TTL removes it). */
const SPEND_KEPT_SECONDS = 86_400;

/** A usage entry as the API shows it (docs/api.md, "Accounts and billing"). */
export interface UsageEntry {
  id: string;
  kind: "charge" | "topup" | "bonus";
  endpoint: string;
  amount_micro_usd: number;
  /** "failed": an auto-topup pull that moved no money (`reason` says why). */
  status: "charged" | "refunded" | "credited" | "failed";
  created_at: string;
  /** An auto-topup pull (credited or failed). */
  auto?: true;
  reason?: string;
}

// DynamoDB's idempotency token (at most 36 characters): the same request id and purpose always give
// the same token, so a retried invocation is applied once (within DynamoDB's 10-minute window).
const token = (requestId: string, purpose: string) => createHash("sha256").update(`${purpose}:${requestId}`).digest("base64url").slice(0, 36);

type UsageItem = TableKey & {
  kind: UsageEntry["kind"];
  endpoint: string;
  amount: number;
  status: UsageEntry["status"];
  requestId: string;
  createdAt: string;
  auto?: boolean;
  reason?: string;
};

/** A usage entry as stored: keyed by account, time and request, so the same request writes the same entry. */
export function usageItem(accountId: string, at: Date, requestId: string, entry: Pick<UsageItem, "kind" | "endpoint" | "amount" | "status">): UsageItem {
  return { ...usageKey(accountId, at, requestId), ...entry, requestId, createdAt: at.toISOString() };
}

/**
 * Debits `amount` for a request: the balance moves only if it covers the price (it can never go
 * below zero) and a usage entry is written in the same transaction. `at` is the request's own time,
 * so a replayed invocation writes the very same entry and is charged once. With `cap` (a signed
 * link's key with a daily limit), the key's spend that UTC day moves in the same transaction, and
 * only while it stays within the limit (429 DAILY_LIMIT_REACHED otherwise). With `holdUntil` (epoch
 * ms; a job item, whose work outlives a request and may be redelivered) the reconciler leaves the
 * charge alone until then, whatever the grace period. With `hold` (a job item: the job's id), the
 * amount comes out of what the job holds (lib/billing/holds.ts), not out of the balance: it was
 * taken from the balance when the job was submitted. With `delivered` (a crawl's page, charged once
 * its output is kept), the charge is born delivered: nothing is pending, nothing can refund it.
 */
export async function chargeForRequest(
  accountId: string,
  amount: number,
  request: { requestId: string; endpoint: string; at: Date; holdUntil?: number; hold?: string; delivered?: true },
  cap: SpendCap | null = null,
): Promise<Charge> {
  const item = {
    ...usageItem(accountId, request.at, request.requestId, { kind: "charge", endpoint: request.endpoint, amount, status: "charged" }),
    ...(request.delivered ? { delivered: true } : {}),
  };
  const entry = { pk: item.pk, sk: item.sk };
  const pending = pendingKey(request.at, accountId, request.requestId);
  const day = request.at.toISOString().slice(0, 10);
  const spend = cap && signingKeySpendKey(cap.keyId, day);
  const charge: Charge = { accountId, amount, entry, requestId: request.requestId, pending, ...(spend ? { spend } : {}) };
  const nextDay = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
  if (cap && amount > cap.limit) throw dailyLimitReached(cap.limit, nextDay);
  // A job item's charge comes out of its job's hold: the account's side first (where a balance debit stands otherwise), the job's last.
  const hold = request.hold ? fromHold(accountId, request.hold, amount, "charge") : null;
  try {
    await transact({
      // A charge born delivered is another transaction (a redelivery's, after a worker charged it pending
      // and died), and so is one at another price (a page read again another way): the entry's condition
      // keeps either from charging twice.
      ClientRequestToken: token(request.requestId, request.delivered ? `charge-delivered-${amount}` : "charge"),
      TransactItems: [
        hold
          ? hold[0]!
          : {
              Update: {
                TableName: config.TABLE_NAME,
                Key: accountKey(accountId),
                UpdateExpression: "SET balance = balance - :amount, totalSpent = totalSpent + :amount",
                ConditionExpression: "attribute_exists(pk) AND balance >= :amount",
                ExpressionAttributeValues: { ":amount": amount },
                ReturnValuesOnConditionCheckFailure: "ALL_OLD",
              },
            },
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: item,
            // Beyond the token's window, the entry itself refuses a second charge for the same request.
            ConditionExpression: "attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
        ...(request.delivered
          ? []
          : [
              {
                Put: {
                  TableName: config.TABLE_NAME,
                  Item: {
                    ...pending,
                    accountId,
                    amount,
                    requestId: request.requestId,
                    entry,
                    ...(spend ? { spend } : {}),
                    ...(request.holdUntil ? { holdUntil: request.holdUntil } : {}),
                  },
                },
              },
            ]),
        ...(hold?.slice(1) ?? []),
        ...(cap && spend
          ? [
              {
                Update: {
                  TableName: config.TABLE_NAME,
                  Key: spend,
                  UpdateExpression: "ADD spent :amount SET expiresAt = if_not_exists(expiresAt, :expires)",
                  ConditionExpression: "attribute_not_exists(spent) OR spent <= :room",
                  ExpressionAttributeValues: { ":amount": amount, ":room": cap.limit - amount, ":expires": nextDay / 1000 + SPEND_KEPT_SECONDS },
                },
              },
            ]
          : []),
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 1)) {
      // Charged before, at what it was charged then (a redelivered page read another way asks another price).
      const before = (error as TransactionCanceledException).CancellationReasons?.[1]?.Item?.amount?.N;
      const made = before === undefined ? charge : { ...charge, amount: Number(before) };
      // Delivered now, when this one is (it may have been left pending).
      if (request.delivered) await markDelivered(made);
      return made;
    }
    if (transactionConditionFailed(error, 0)) {
      const old = (error as TransactionCanceledException).CancellationReasons?.[0]?.Item;
      throw insufficientBalance(amount, Number(old?.balance?.N ?? 0));
    }
    if (cap && transactionConditionFailed(error, 3)) throw dailyLimitReached(cap.limit, nextDay);
    throw error;
  }
  return charge;
}

/** Marks a charge delivered (its response was produced): from then on nothing refunds it. */
export async function markDelivered(charge: Charge): Promise<void> {
  try {
    await transact({
      ClientRequestToken: token(charge.requestId, "deliver"),
      TransactItems: [
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: charge.entry,
            UpdateExpression: "SET delivered = :yes",
            ConditionExpression: "#status = :charged",
            ExpressionAttributeNames: { "#status": "status" },
            // No timestamp: a retried invocation sends the same input with the same token (a new value would be refused as a mismatch).
            ExpressionAttributeValues: { ":yes": true, ":charged": "charged" },
          },
        },
        { Delete: { TableName: config.TABLE_NAME, Key: charge.pending } },
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return; // refunded meanwhile: nothing to mark
    throw error;
  }
}

/**
 * Gives a charge back (the work failed, or its request died): balance restored, entry marked
 * refunded, at most once. False when it was delivered or refunded by another call; true when this
 * call refunded it, or repeated (within DynamoDB's 10-minute token window) the call that did.
 */
export async function refundCharge(charge: Charge): Promise<boolean> {
  try {
    await transact({
      ClientRequestToken: token(charge.requestId, "refund"),
      TransactItems: [
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: charge.entry,
            UpdateExpression: "SET #status = :refunded",
            // Never a delivered charge: the customer got what they paid for.
            ConditionExpression: "#status = :charged AND attribute_not_exists(delivered)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":refunded": "refunded", ":charged": "charged" },
          },
        },
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: accountKey(charge.accountId),
            UpdateExpression: "SET balance = balance + :amount, totalSpent = totalSpent - :amount",
            ExpressionAttributeValues: { ":amount": charge.amount },
          },
        },
        { Delete: { TableName: config.TABLE_NAME, Key: charge.pending } },
        // A refunded charge does not count against its link's daily limit.
        ...(charge.spend
          ? [
              {
                Update: {
                  TableName: config.TABLE_NAME,
                  Key: charge.spend,
                  UpdateExpression: "ADD spent :minus",
                  ExpressionAttributeValues: { ":minus": -charge.amount },
                },
              },
            ]
          : []),
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return false; // already refunded, or delivered
    throw error;
  }
  return true;
}

/** Adds `amount` to a balance (a top-up), with its usage entry; idempotent per reference. */
export async function creditAccount(accountId: string, amount: number, credit: { reference: string; endpoint: string; at?: Date }): Promise<void> {
  const entry = usageItem(accountId, credit.at ?? new Date(), credit.reference, { kind: "topup", endpoint: credit.endpoint, amount, status: "credited" });
  await transact({ ClientRequestToken: token(credit.reference, "credit"), TransactItems: creditItems(accountId, entry) });
}

/** A credit of `entry.amount` to an account that exists, with its (new) usage entry: one transaction's items. */
function creditItems(accountId: string, entry: UsageItem & Record<string, unknown>): TransactItem[] {
  return [
    {
      Update: {
        TableName: config.TABLE_NAME,
        Key: accountKey(accountId),
        UpdateExpression: "SET balance = balance + :amount",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":amount": entry.amount },
      },
    },
    { Put: { TableName: config.TABLE_NAME, Item: entry, ConditionExpression: "attribute_not_exists(pk)" } },
  ];
}

/** One item of a transaction, as the document client takes it. */
export type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** A transfer on chain that paid for something: what it paid for, and for a top-up, whose balance it credits. */
export interface Transfer {
  readonly transaction: string;
  readonly payer: string;
  readonly amount: number;
  readonly network: string;
  /** The request that was paid for, and when it arrived (a top-up's usage entry is keyed by them). */
  readonly requestId: string;
  readonly at: Date;
  /** The x402 payment (its reservation's id). */
  readonly paymentId: string;
  /** A top-up credits this account; otherwise the transfer paid for a render. */
  readonly accountId: string | null;
  /** An auto-topup pull (lib/payments/auto-topup.ts) rather than an x402 top-up. */
  readonly auto?: boolean;
}

/**
 * Records a transfer, and credits a top-up's balance, exactly once ever: the SETTLE#<tx> record is
 * create-only and written in the same transaction as the credit (and the caller's `also` items), so
 * whoever records it (the request, or the reconciler after a crash or a pending settlement), however
 * often, one transfer moves one balance once. False when it was recorded already (nothing written).
 */
export async function recordTransfer(transfer: Transfer, also: TransactItem[] = []): Promise<boolean> {
  const { transaction, accountId, amount, requestId, at, auto, ...rest } = transfer;
  const items: TransactItem[] = [
    {
      Put: {
        TableName: config.TABLE_NAME,
        Item: {
          ...settlementKey(transaction),
          ...rest,
          amount,
          requestId,
          kind: accountId ? "topup" : "render",
          accountId,
          createdAt: new Date().toISOString(),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
  ];
  if (accountId) {
    items.push(
      ...creditItems(accountId, {
        ...usageItem(accountId, at, requestId, { kind: "topup", endpoint: auto ? "auto-topup" : "topup", amount, status: "credited" }),
        transaction,
        ...(auto ? { auto: true } : {}),
      }),
    );
  }
  // No idempotency token: the request and the reconciler may record the same transfer with other
  // items; the create-only record is what makes it once.
  try {
    await transact({ TransactItems: [...items, ...also] });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return false;
    throw error;
  }
  return true;
}

/** The newest usage entries of an account, newest first. */
export async function recentUsage(accountId: string, signal?: AbortSignal, limit = 20): Promise<UsageEntry[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": accountKey(accountId).pk, ":prefix": USAGE_PREFIX },
      ScanIndexForward: false,
      Limit: limit,
      ConsistentRead: true,
    }),
    { abortSignal: signal },
  );
  return (Items as UsageItem[]).map((item) => ({
    id: item.requestId,
    kind: item.kind,
    endpoint: item.endpoint,
    amount_micro_usd: item.amount,
    status: item.status,
    created_at: item.createdAt,
    ...(item.auto ? { auto: true as const } : {}),
    ...(item.reason ? { reason: item.reason } : {}),
  }));
}

/**
 * Refunds every charge whose PENDING marker is older than `graceMs` (its request died before it
 * answered). Safe to run twice at once and again later: each refund is conditional and removes its
 * marker. Returns how many charges this run refunded.
 */
export async function reconcileCharges(now: number, graceMs: number, signal?: AbortSignal): Promise<number> {
  const cutoff = new Date(now - graceMs).toISOString();
  let refunded = 0;
  const pages = queryPages(
    { KeyConditionExpression: "pk = :pk AND sk < :cutoff", ExpressionAttributeValues: { ":pk": PENDING_PARTITION, ":cutoff": cutoff }, ConsistentRead: true },
    signal,
  );
  for await (const page of pages) {
    for (const item of (page.Items ?? []) as (TableKey & Omit<Charge, "pending"> & { holdUntil?: number })[]) {
      const { pk, sk, accountId, amount, entry, requestId, spend, holdUntil } = item;
      if (holdUntil !== undefined && holdUntil > now) continue;
      if (await refundCharge({ accountId, amount, entry, requestId, pending: { pk, sk }, ...(spend ? { spend } : {}) })) refunded++;
    }
  }
  return refunded;
}
