import { randomUUID } from "node:crypto";
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { conditionHeld, documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { AUTO_TOPUP_PARTITION, accountKey, autoTopupKey } from "./keys.js";
import { type TransactItem, usageItem } from "./ledger.js";
import { toCents } from "./money.js";

// Auto-topup's state in the table (docs/api.md, "Auto-topup"): one item per account that has ever
// configured it, in one partition the reconciler reads. The pull itself (the chain) is
// lib/payments/auto-topup.ts; this file keeps the rules that make it safe:
//   - at most one pull per account in flight: a pull is claimed by a conditional write that also
//     reserves its amount against the month's cap, and the claim is released only by its outcome;
//   - the month's total never passes the cap: what is claimed counts, what fails is given back;
//   - the balance is credited once per mined transfer (lib/billing/ledger.ts, recordTransfer);
//   - failures back off, and after MAX_FAILURES in a row auto-topup pauses until the customer
//     changes it. Turning it off keeps the item (the month's total, a pull in flight): turning it on
//     again does not reset the cap.

/** Failures in a row after which auto-topup pauses. */
const MAX_FAILURES = 3;
/** The wait before the next attempt after the first and second failure in a row. */
const BACKOFF_MS = [60_000, 10 * 60_000] as const;

/** A pull under way: claimed, and perhaps sent (its transaction), not yet credited or failed. */
export interface PullInFlight {
  readonly pullId: string;
  readonly amount: number;
  readonly startedAt: string;
  /** The chain's block number when the pull was claimed: a transfer sent but not noted is searched for from here. */
  readonly fromBlock: string | null;
  readonly transaction: string | null;
}

export interface AutoTopup {
  readonly accountId: string;
  readonly threshold: number;
  readonly amount: number;
  readonly monthlyCap: number;
  readonly payer: string;
  /** "off": turned off by the customer (the item stays: the month's total and a pull in flight). */
  readonly status: "active" | "paused" | "off";
  readonly pausedReason: string | null;
  readonly failures: number;
  /** No pull before this (epoch ms): the backoff after a failure. */
  readonly nextAttemptAt: number;
  readonly lastFailure: { readonly at: string; readonly reason: string } | null;
  /** The calendar month (UTC, "2026-11") that `monthTotal` counts: credited and in-flight pulls. */
  readonly month: string;
  readonly monthTotal: number;
  readonly inFlight: PullInFlight | null;
  readonly updatedAt: string;
  /**
   * Counts the changes that decide whether a pull is due (settings, claims, credits, failures): a
   * claim holds only against the version it was decided on, so a pull decided on a balance read
   * before another pull's credit is never made.
   */
  readonly version: number;
}

/** The settings a customer gives (micro-USD). */
export interface AutoTopupSettings {
  readonly threshold: number;
  readonly amount: number;
  readonly monthlyCap: number;
  readonly payer: string;
}

const monthOf = (at: Date) => at.toISOString().slice(0, 7);

/** An account's auto-topup as answers show it (docs/api.md, "Auto-topup"); null when off or never configured. */
export function autoTopupView(item: AutoTopup | null, now = new Date()) {
  if (!item || item.status === "off") return null;
  return {
    status: item.status,
    threshold_cents: toCents(item.threshold),
    amount_cents: toCents(item.amount),
    monthly_cap_cents: toCents(item.monthlyCap),
    payer: item.payer,
    month: monthOf(now),
    month_total_cents: item.month === monthOf(now) ? toCents(item.monthTotal) : 0,
    in_flight: item.inFlight !== null,
    last_failure: item.lastFailure,
    paused_reason: item.pausedReason,
  };
}

const table = config.TABLE_NAME;

/** The account's auto-topup item, read consistently; null when it never configured one. */
export async function getAutoTopup(accountId: string, signal?: AbortSignal): Promise<AutoTopup | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: table, Key: autoTopupKey(accountId), ConsistentRead: true }), { abortSignal: signal });
  return (Item as AutoTopup | undefined) ?? null;
}

/** Every account's auto-topup item (the reconciler's round). */
export async function allAutoTopups(): Promise<AutoTopup[]> {
  const items: AutoTopup[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": AUTO_TOPUP_PARTITION },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as AutoTopup[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The account item's copy of the switch: what a charge reads (with the key) to know whether to look at its balance. */
const accountSwitch = (accountId: string, threshold: number | null): TransactItem => ({
  Update: {
    TableName: table,
    Key: accountKey(accountId),
    UpdateExpression:
      threshold === null ? "SET autoTopupEnabled = :off REMOVE autoTopupThreshold" : "SET autoTopupEnabled = :on, autoTopupThreshold = :threshold",
    ConditionExpression: "attribute_exists(pk)",
    ExpressionAttributeValues: threshold === null ? { ":off": false } : { ":on": true, ":threshold": threshold },
  },
});

/**
 * Turns auto-topup on with `settings` (new, changed, or resumed after a pause): failures forgotten,
 * the month's total and a pull in flight kept. The account's switch moves in the same transaction.
 */
export async function saveAutoTopup(accountId: string, settings: AutoTopupSettings, now = new Date()): Promise<void> {
  await transact({
    TransactItems: [
      {
        Update: {
          TableName: table,
          Key: autoTopupKey(accountId),
          UpdateExpression:
            "SET accountId = :id, threshold = :threshold, amount = :amount, monthlyCap = :cap, payer = :payer, #status = :active, pausedReason = :null, failures = :zero, nextAttemptAt = :zero, lastFailure = if_not_exists(lastFailure, :null), #month = if_not_exists(#month, :month), monthTotal = if_not_exists(monthTotal, :zero), inFlight = if_not_exists(inFlight, :null), updatedAt = :now ADD version :one",
          ExpressionAttributeNames: { "#status": "status", "#month": "month" },
          ExpressionAttributeValues: {
            ":id": accountId,
            ":threshold": settings.threshold,
            ":amount": settings.amount,
            ":cap": settings.monthlyCap,
            ":payer": settings.payer,
            ":active": "active",
            ":null": null,
            ":zero": 0,
            ":month": monthOf(now),
            ":now": now.toISOString(),
            ":one": 1,
          },
        },
      },
      accountSwitch(accountId, settings.threshold),
    ],
  });
}

/** Turns auto-topup off (PATCH false, DELETE): a pull in flight still finishes and is credited. False when it was never configured. */
export async function turnOffAutoTopup(accountId: string, now = new Date()): Promise<boolean> {
  try {
    await transact({
      TransactItems: [
        {
          Update: {
            TableName: table,
            Key: autoTopupKey(accountId),
            UpdateExpression: "SET #status = :off, updatedAt = :now ADD version :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":off": "off", ":now": now.toISOString(), ":one": 1 },
          },
        },
        accountSwitch(accountId, null),
      ],
    });
    return true;
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return false;
    throw error;
  }
}

/**
 * Claims a pull of the configured amount for `accountId` at `now`, when auto-topup is active, no pull
 * is in flight, the backoff has passed and the month's cap has room: one conditional write, so of
 * any number of claims at once one wins. The amount is counted against the month from here.
 * Returns the pull, or null when there is nothing to do (or another claim won).
 */
export async function claimPull(current: AutoTopup, fromBlock: string | null, now = new Date()): Promise<PullInFlight | null> {
  const month = monthOf(now);
  const sameMonth = current.month === month;
  if (current.status !== "active" || current.inFlight || current.nextAttemptAt > now.getTime()) return null;
  if ((sameMonth ? current.monthTotal : 0) + current.amount > current.monthlyCap) return null;
  const pull: PullInFlight = { pullId: randomUUID(), amount: current.amount, startedAt: now.toISOString(), fromBlock, transaction: null };
  const claimed = await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: table,
        Key: autoTopupKey(current.accountId),
        UpdateExpression: sameMonth
          ? "SET inFlight = :pull, monthTotal = monthTotal + :amount, updatedAt = :now ADD version :one"
          : "SET inFlight = :pull, #month = :month, monthTotal = :amount, updatedAt = :now ADD version :one",
        ConditionExpression: `version = :version AND #status = :active AND inFlight = :null AND nextAttemptAt <= :at AND amount = :amount AND ${
          sameMonth ? "#month = :month AND monthTotal <= :room" : "#month <> :month AND :amount <= monthlyCap"
        }`,
        ExpressionAttributeNames: { "#status": "status", "#month": "month" },
        ExpressionAttributeValues: {
          ":pull": pull,
          ":amount": current.amount,
          ":now": now.toISOString(),
          ":month": month,
          ":active": "active",
          ":null": null,
          ":at": now.getTime(),
          ":version": current.version,
          ":one": 1,
          ...(sameMonth ? { ":room": current.monthlyCap - current.amount } : {}),
        },
      }),
    ),
  );
  return claimed ? pull : null;
}

/** Notes the transaction a pull sent, so that a crash before it is credited leaves it findable. */
export async function notePullSent(accountId: string, pull: PullInFlight, transaction: string): Promise<void> {
  await documents.send(
    new UpdateCommand({
      TableName: table,
      Key: autoTopupKey(accountId),
      UpdateExpression: "SET inFlight.#transaction = :transaction",
      ConditionExpression: "inFlight.pullId = :pullId",
      ExpressionAttributeNames: { "#transaction": "transaction" },
      ExpressionAttributeValues: { ":transaction": transaction, ":pullId": pull.pullId },
    }),
  );
}

/** Records that a sent pull is stuck (its transaction unmined), as its last failure, without closing it. */
export async function notePullStuck(accountId: string, pull: PullInFlight, reason: string, now = new Date()): Promise<void> {
  await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: table,
        Key: autoTopupKey(accountId),
        UpdateExpression: "SET lastFailure = :failure, updatedAt = :now",
        ConditionExpression: "inFlight.pullId = :pullId",
        ExpressionAttributeValues: { ":failure": { at: now.toISOString(), reason }, ":now": now.toISOString(), ":pullId": pull.pullId },
      }),
    ),
  );
}

/** The items that close a credited pull, in the transaction that records its transfer (lib/payments/auto-topup.ts). */
export const pullCreditedItems = (accountId: string, pull: PullInFlight, now = new Date()): TransactItem[] => [
  {
    Update: {
      TableName: table,
      Key: autoTopupKey(accountId),
      UpdateExpression: "SET inFlight = :null, failures = :zero, nextAttemptAt = :zero, updatedAt = :now ADD version :one",
      ConditionExpression: "inFlight.pullId = :pullId",
      ExpressionAttributeValues: { ":null": null, ":zero": 0, ":now": now.toISOString(), ":pullId": pull.pullId, ":one": 1 },
    },
  },
];

/**
 * Closes a pull that moved no money (refused before sending, reverted, never mined, or never sent):
 * its amount is given back to the month, the failure recorded (on the item and as a usage entry),
 * and the next attempt put off; the MAX_FAILURES-th failure in a row pauses auto-topup (the
 * account's switch goes off with it). False when the pull was already closed.
 */
export async function pullFailed(current: AutoTopup, pull: PullInFlight, reason: string, now = new Date()): Promise<boolean> {
  const failures = current.failures + 1;
  const pause = failures >= MAX_FAILURES;
  // Given back to the month it was counted in (unless the month has turned since: the new one never counted it).
  const giveBack = current.month === monthOf(new Date(pull.startedAt));
  const sets = ["inFlight = :null", "failures = :failures", "nextAttemptAt = :next", "lastFailure = :failure", "updatedAt = :now"];
  if (giveBack) sets.push("monthTotal = monthTotal - :amount");
  if (pause) sets.push("#status = :paused", "pausedReason = :reason");
  try {
    await transact({
      TransactItems: [
        {
          Update: {
            TableName: table,
            Key: autoTopupKey(current.accountId),
            UpdateExpression: `SET ${sets.join(", ")} ADD version :one`,
            ConditionExpression: "inFlight.pullId = :pullId",
            ...(pause ? { ExpressionAttributeNames: { "#status": "status" } } : {}),
            ExpressionAttributeValues: {
              ":null": null,
              ":failures": failures,
              ":next": now.getTime() + BACKOFF_MS[Math.min(failures, BACKOFF_MS.length) - 1]!,
              ":failure": { at: now.toISOString(), reason },
              ":now": now.toISOString(),
              ":pullId": pull.pullId,
              ":one": 1,
              ...(giveBack ? { ":amount": pull.amount } : {}),
              ...(pause ? { ":paused": "paused", ":reason": `Paused after ${MAX_FAILURES} failed top-ups in a row; the last: ${reason}` } : {}),
            },
          },
        },
        {
          Put: {
            TableName: table,
            Item: {
              ...usageItem(current.accountId, now, pull.pullId, { kind: "topup", endpoint: "auto-topup", amount: pull.amount, status: "failed" }),
              auto: true,
              reason,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        ...(pause && current.status === "active" ? [accountSwitch(current.accountId, null)] : []),
      ],
    });
    return true;
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return false;
    throw error;
  }
}
