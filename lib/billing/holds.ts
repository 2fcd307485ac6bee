import type { TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { queryAll, transact, transactIf, transactionConditionFailed } from "./dynamodb.js";
import { jobHoldExceeds } from "./errors.js";
import { accountKey, HOLD_PARTITION, holdKey } from "./keys.js";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

// A job holds its price (docs/api.md, "Jobs"): submitting it moves the price of all its items from
// the account's balance to `held` (one conditional write: the balance, less what other jobs hold,
// must cover it), with a HOLD marker naming the job and what it still holds. Each item then turns
// its share into a charge (lib/billing/ledger.ts, chargeForRequest with `hold`) or gives it back
// (cancelled, or ended without a charge); the reconciler gives back what a job still holds once it
// is gone or has ended. So a job's items always find their money, and an account can hold the
// shared worker pool only with money it has: while `balance` is what may be spent now,
// `balance + held` is what the ledger owes the customer.

/** A job's hold as stored. */
export interface Hold {
  readonly jobId: string;
  readonly accountId: string;
  /** What the job still holds (micro-USD). */
  readonly held: number;
  readonly createdAt: string;
  /** A crawl's (lib/crawl), which its own reconciler closes; else a job's. */
  readonly kind?: "crawl";
}

const table = config.TABLE_NAME;

/**
 * Holds `amount` of `accountId`'s balance for job `jobId`: 402 INSUFFICIENT_BALANCE (naming the
 * amount, the balance and what other jobs hold) when the balance does not cover it; nothing is
 * held then.
 */
export async function placeHold(accountId: string, jobId: string, amount: number, now = new Date(), kind?: Hold["kind"]): Promise<void> {
  try {
    await transact({
      TransactItems: [
        {
          Update: {
            TableName: table,
            Key: accountKey(accountId),
            UpdateExpression: "SET balance = balance - :amount, held = if_not_exists(held, :zero) + :amount",
            ConditionExpression: "attribute_exists(pk) AND balance >= :amount",
            ExpressionAttributeValues: { ":amount": amount, ":zero": 0 },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
        {
          Put: {
            TableName: table,
            Item: { ...holdKey(jobId), jobId, accountId, held: amount, createdAt: now.toISOString(), ...(kind ? { kind } : {}) },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) {
      const old = (error as { CancellationReasons?: { Item?: Record<string, { N?: string }> }[] }).CancellationReasons?.[0]?.Item;
      throw jobHoldExceeds(amount, Number(old?.balance?.N ?? 0), Number(old?.held?.N ?? 0));
    }
    throw error;
  }
}

/** The items of a transaction that take `amount` from job `jobId`'s hold (a charge, or a release). */
export const fromHold = (accountId: string, jobId: string, amount: number, into: "charge" | "balance"): TransactItem[] => [
  {
    Update: {
      TableName: table,
      Key: accountKey(accountId),
      UpdateExpression:
        into === "charge" ? "SET held = held - :amount, totalSpent = totalSpent + :amount" : "SET held = held - :amount, balance = balance + :amount",
      ConditionExpression: "held >= :amount",
      ExpressionAttributeValues: { ":amount": amount },
    },
  },
  {
    Update: {
      TableName: table,
      Key: holdKey(jobId),
      UpdateExpression: "SET held = held - :amount",
      ConditionExpression: "held >= :amount",
      ExpressionAttributeValues: { ":amount": amount },
    },
  },
];

/**
 * Gives `amount` of job `jobId`'s hold back to the balance, together with `also` (the change that
 * makes it once: an item cancelled, or marked released). False when a condition of `also` failed
 * (it was done already); nothing moves then.
 */
export const releaseHold = (accountId: string, jobId: string, amount: number, also: TransactItem[]): Promise<boolean> =>
  transactIf(
    { TransactItems: [...also, ...fromHold(accountId, jobId, amount, "balance")] },
    also.map((_, index) => index),
  );

/** Every job's hold (the reconciler's round). */
export const allHolds = (): Promise<Hold[]> => queryAll<Hold>(HOLD_PARTITION);

/** Closes a hold whose job is gone or has ended: what it still holds goes back to the balance, and the marker goes. False when it changed meanwhile. */
export const closeHold = (hold: Hold): Promise<boolean> =>
  transactIf(
    {
      TransactItems: [
        { Delete: { TableName: table, Key: holdKey(hold.jobId), ConditionExpression: "held = :held", ExpressionAttributeValues: { ":held": hold.held } } },
        {
          Update: {
            TableName: table,
            Key: accountKey(hold.accountId),
            UpdateExpression: "SET held = held - :amount, balance = balance + :amount",
            ConditionExpression: "held >= :amount",
            ExpressionAttributeValues: { ":amount": hold.held },
          },
        },
      ],
    },
    [0, 1],
  );
