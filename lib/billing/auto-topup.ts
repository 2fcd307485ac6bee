import { randomUUID } from "node:crypto";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { conditionHeld, documents, queryAll, transact, transactIf, transactionConditionFailed } from "./dynamodb.js";
import { AUTO_TOPUP_PARTITION, accountKey, autoTopupKey, payerKey, usedPermitKey } from "./keys.js";
import { type TransactItem, usageItem } from "./ledger.js";
import { toCents } from "./money.js";

// Auto-topup's state in the table (docs/api.md, "Auto-topup"): one item per account that has ever
// configured it, in one partition the reconciler reads. The pull itself (the chain) is
// lib/payments/auto-topup.ts; this file keeps the rules that make it safe:
//   - at most one pull per account in flight: a pull is claimed by a conditional write that also
//     reserves its amount against the month's cap, and the claim is released only by its outcome;
//   - the month's total never passes the cap: what is claimed counts, what fails is given back;
//   - the balance is credited once per mined transfer (lib/billing/ledger.ts, recordTransfer);
//   - a payer belongs to one account: the first account that proves it controls the wallet (a
//     permit or a signed authorisation: lib/payments/auto-topup.ts) binds it, create-only, until it
//     lets it go (DELETE); every claim re-checks the binding in its own transaction;
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
  /** The transfer's hash, noted before it is broadcast: the one transaction that can close this pull. */
  readonly transaction: string | null;
  /** The top-up address's nonce the transfer was signed with: once the chain has used it for another transaction, this one can never be mined. */
  readonly nonce?: number | null;
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
export const allAutoTopups = (): Promise<AutoTopup[]> => queryAll<AutoTopup>(AUTO_TOPUP_PARTITION);

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

/** The error of a payer bound to another account. */
export const payerTaken = (payer: string) =>
  new AppError(
    "PAYER_TAKEN",
    `The wallet ${payer} is already the auto-topup payer of another account; that account must turn auto-topup off (DELETE /api/v1/auto-topup) before another may use it.`,
  );

/** The binding of `payer` to `accountId`: created (after a proof), or only checked (when nothing was proven). */
const bindingItem = (accountId: string, payer: string, proven: boolean): TransactItem =>
  proven
    ? {
        Put: {
          TableName: table,
          Item: { ...payerKey(payer), accountId, payer: payer.toLowerCase() },
          ConditionExpression: "attribute_not_exists(pk) OR accountId = :id",
          ExpressionAttributeValues: { ":id": accountId },
        },
      }
    : {
        ConditionCheck: {
          TableName: table,
          Key: payerKey(payer),
          ConditionExpression: "accountId = :id",
          ExpressionAttributeValues: { ":id": accountId },
        },
      };

/** Lets `payer` go, if `accountId` holds it. */
const releaseItem = (accountId: string, payer: string): TransactItem => ({
  Delete: {
    TableName: table,
    Key: payerKey(payer),
    ConditionExpression: "attribute_not_exists(pk) OR accountId = :id",
    ExpressionAttributeValues: { ":id": accountId },
  },
});

/**
 * Spends a permit as a proof (create-only): true the first time, false when it was used before.
 * One whose allowance already exists is never submitted, so its nonce stays unused on chain and the
 * chain alone would take it again, from anyone who saw it; kept until its deadline (at most a day
 * away), after which the chain refuses it anyway.
 */
export const spendPermit = (payer: string, nonce: bigint, value: bigint, deadline: number): Promise<boolean> =>
  conditionHeld(
    documents.send(
      new PutCommand({
        TableName: table,
        Item: { ...usedPermitKey(payer, nonce, value, deadline), usedAt: new Date().toISOString(), expiresAt: deadline + 3_600 },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );

/** The account that holds `payer`, if any. */
export async function payerHolder(payer: string, signal?: AbortSignal): Promise<string | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: table, Key: payerKey(payer), ConsistentRead: true }), { abortSignal: signal });
  return (Item?.accountId as string | undefined) ?? null;
}

/**
 * Turns auto-topup on with `settings` (new, changed, or resumed after a pause): failures forgotten,
 * the month's total and a pull in flight kept. The account's switch moves in the same transaction,
 * and so does the payer's binding: `proven` (the caller just proved it controls the payer) binds it
 * to this account unless another holds it; otherwise the account must hold it already. A payer the
 * account held before and no longer names is let go. PAYER_TAKEN when another account holds it.
 */
export async function saveAutoTopup(
  accountId: string,
  settings: AutoTopupSettings,
  options: { proven: boolean; previousPayer?: string | null },
  now = new Date(),
): Promise<void> {
  const { previousPayer } = options;
  const release = previousPayer && previousPayer.toLowerCase() !== settings.payer.toLowerCase() ? [releaseItem(accountId, previousPayer)] : [];
  try {
    await transact({
      TransactItems: [
        bindingItem(accountId, settings.payer, options.proven),
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
        ...release,
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) {
      if (options.proven) throw payerTaken(settings.payer);
      throw new AppError(
        "PAYER_TAKEN",
        `This account no longer holds the wallet ${settings.payer} as its auto-topup payer; set auto-topup again with PUT /api/v1/auto-topup and the payer's permit or authorization.`,
      );
    }
    throw error;
  }
}

/**
 * Turns auto-topup off (PATCH false, DELETE): a pull in flight still finishes and is credited.
 * `release` (DELETE) also lets the payer go, so that another account may prove and bind it.
 * False when it was never configured.
 */
export async function turnOffAutoTopup(accountId: string, options: { release: boolean } = { release: false }, now = new Date()): Promise<boolean> {
  const current = options.release ? await getAutoTopup(accountId) : null;
  return transactIf({
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
      ...(current ? [releaseItem(accountId, current.payer)] : []),
    ],
  });
}

/** Pauses an active auto-topup with `reason` (its payer is no longer this account's): the switch goes off with it. */
export async function pauseAutoTopup(current: AutoTopup, reason: string, now = new Date()): Promise<boolean> {
  return transactIf({
    TransactItems: [
      {
        Update: {
          TableName: table,
          Key: autoTopupKey(current.accountId),
          UpdateExpression: "SET #status = :paused, pausedReason = :reason, updatedAt = :now ADD version :one",
          ConditionExpression: "version = :version AND #status = :active",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":paused": "paused",
            ":active": "active",
            ":reason": reason,
            ":now": now.toISOString(),
            ":one": 1,
            ":version": current.version,
          },
        },
      },
      accountSwitch(current.accountId, null),
    ],
  });
}

/**
 * Claims a pull of the configured amount for `accountId` at `now`, when auto-topup is active, no pull
 * is in flight, the backoff has passed and the month's cap has room: one conditional write, so of
 * any number of claims at once one wins, and only while the account still holds its payer. The
 * amount is counted against the month from here.
 * Returns the pull, or null when there is nothing to do (or another claim won).
 */
export async function claimPull(current: AutoTopup, now = new Date()): Promise<PullInFlight | null> {
  const month = monthOf(now);
  const sameMonth = current.month === month;
  if (current.status !== "active" || current.inFlight || current.nextAttemptAt > now.getTime()) return null;
  if ((sameMonth ? current.monthTotal : 0) + current.amount > current.monthlyCap) return null;
  const pull: PullInFlight = { pullId: randomUUID(), amount: current.amount, startedAt: now.toISOString(), transaction: null };
  // Another claim won (or the settings changed), or the payer is no longer this account's: nothing is claimed.
  const claimed = await transactIf(
    {
      TransactItems: [
        {
          Update: {
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
          },
        },
        bindingItem(current.accountId, current.payer, false),
      ],
    },
    [0, 1],
  );
  return claimed ? pull : null;
}

/**
 * Notes the transfer a pull is about to broadcast (its hash and nonce), before it is broadcast: a
 * crash at any later moment leaves the one transaction that can close this pull findable, so the
 * reconciler never has to guess it from the payer and the amount.
 */
export async function notePullSent(accountId: string, pull: PullInFlight, transaction: string, nonce: number): Promise<void> {
  await documents.send(
    new UpdateCommand({
      TableName: table,
      Key: autoTopupKey(accountId),
      UpdateExpression: "SET inFlight.#transaction = :transaction, inFlight.nonce = :nonce",
      ConditionExpression: "inFlight.pullId = :pullId",
      ExpressionAttributeNames: { "#transaction": "transaction" },
      ExpressionAttributeValues: { ":transaction": transaction, ":nonce": nonce, ":pullId": pull.pullId },
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
  return transactIf({
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
}
