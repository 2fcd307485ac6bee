// The ledger under transaction conflicts, in process against the local stack's DynamoDB Local.
// Real DynamoDB cancels a transaction that meets another on the same item (TransactionConflict);
// DynamoDB Local serialises transactions and never does. So the faults are injected: a middleware
// on the service's own DynamoDB client cancels chosen TransactWriteItems calls before they are sent,
// exactly as DynamoDB would answer (nothing applied). Everything else is the real table. Credits
// here are operators' (endpoint "admin"): an x402 top-up would need a settlement to match.
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { allUsageEntries } from "../helpers/ledger.js";

type Ledger = typeof import("../../lib/billing/ledger.js");
type Accounts = typeof import("../../lib/billing/accounts.js");
let ledger: Ledger;
let accounts: Accounts;
let retry: { attempts: number };

/** Which TransactWriteItems calls to cancel: decided per call, in order. */
let cancel: (call: number, token: string | undefined) => "TransactionConflict" | "ThrottlingError" | null = () => null;
let calls: { token: string | undefined; cancelled: boolean }[] = [];

beforeAll(async () => {
  useSharedStackInProcess();
  const client = await import("../../lib/billing/dynamodb.js");
  ledger = await import("../../lib/billing/ledger.js");
  accounts = await import("../../lib/billing/accounts.js");
  retry = client.TRANSACT_RETRY;
  client.dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "TransactWriteItemsCommand") return next(args);
      const input = args.input as { ClientRequestToken?: string; TransactItems: unknown[] };
      const reason = cancel(calls.length, input.ClientRequestToken);
      calls.push({ token: input.ClientRequestToken, cancelled: reason !== null });
      if (!reason) return next(args);
      throw new TransactionCanceledException({
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reason}] (injected by the test)`,
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: input.TransactItems.map((_, index) => ({ Code: index === 0 ? reason : "None" })),
      });
    },
    { step: "initialize", name: "injectTransactionFaults" },
  );
});

beforeEach(() => {
  cancel = () => null;
  calls = [];
});

/** A new account; the calls recorded so far (its signup) are forgotten. */
const newAccount = async () => {
  const { account } = await accounts.createAccount(`conflict-${crypto.randomUUID()}@shotline.test`, crypto.randomUUID());
  calls = [];
  return account;
};
const balanceOf = async (accountId: string) => (await accounts.getAccount(accountId))!.balance;
const charge = (accountId: string, amount: number) =>
  ledger.chargeForRequest(accountId, amount, { requestId: crypto.randomUUID(), endpoint: "screenshot", at: new Date() });

describe("ledger transactions under conflicts", () => {
  it("a charge cancelled three times by conflicts is retried with the same idempotency token and applied once", async () => {
    const account = await newAccount();
    cancel = (call) => (call < 3 ? "TransactionConflict" : null);
    await charge(account.accountId, 5_000);
    expect(calls.map((c) => c.cancelled)).toEqual([true, true, true, false]);
    expect(new Set(calls.map((c) => c.token)).size).toBe(1);
    expect(calls[0]!.token).toBeTruthy();
    expect(await balanceOf(account.accountId)).toBe(account.balance - 5_000);
  });

  it("throttling of a transaction is retried too", async () => {
    const account = await newAccount();
    cancel = (call) => (call < 2 ? "ThrottlingError" : null);
    await ledger.creditAccount(account.accountId, 7_000, { reference: crypto.randomUUID(), endpoint: "admin" });
    expect(await balanceOf(account.accountId)).toBe(account.balance + 7_000);
  });

  it("a refund and a top-up credit survive conflicts (neither is lost)", async () => {
    const account = await newAccount();
    const charged = await charge(account.accountId, 5_000);
    cancel = (call) => (call % 2 === 0 ? "TransactionConflict" : null);
    await ledger.refundCharge(charged);
    await ledger.creditAccount(account.accountId, 1_000_000, { reference: crypto.randomUUID(), endpoint: "admin" });
    expect(await balanceOf(account.accountId)).toBe(account.balance + 1_000_000);
    const entries = await allUsageEntries(account.accountId);
    expect(entries.filter((e) => e.kind === "charge").map((e) => e.status)).toEqual(["refunded"]);
    expect(entries.filter((e) => e.kind === "topup")).toHaveLength(1);
  });

  it("signup survives a conflict", async () => {
    cancel = (call) => (call === 0 ? "TransactionConflict" : null);
    const account = await newAccount();
    expect(await balanceOf(account.accountId)).toBe(account.balance);
  });

  it("gives up after the documented number of attempts, having changed nothing", async () => {
    const account = await newAccount();
    cancel = () => "TransactionConflict";
    await expect(charge(account.accountId, 5_000)).rejects.toBeInstanceOf(TransactionCanceledException);
    expect(calls).toHaveLength(retry.attempts);
    expect(await balanceOf(account.accountId)).toBe(account.balance);
  });

  it("a failed condition is an answer, not a conflict: an unaffordable charge is tried once", async () => {
    const account = await newAccount();
    await expect(charge(account.accountId, account.balance + 1)).rejects.toMatchObject({ code: "INSUFFICIENT_BALANCE" });
    expect(calls).toHaveLength(1);
  });

  it("concurrent charges, refunds and top-ups on one account each meeting a conflict first: the final balance is exact", async () => {
    const account = await newAccount();
    // Every transaction's first attempt meets a conflict (its token identifies it).
    const met = new Set<string | undefined>();
    cancel = (_, token) => {
      if (met.has(token)) return null;
      met.add(token);
      return "TransactionConflict";
    };
    const price = 5_000;
    const credits = [300_000, 200_000];
    await Promise.all([
      ...Array.from({ length: 12 }, async (_, i) => {
        const charged = await charge(account.accountId, price);
        if (i % 3 === 0) await ledger.refundCharge(charged);
      }),
      ...credits.map((amount) => ledger.creditAccount(account.accountId, amount, { reference: crypto.randomUUID(), endpoint: "admin" })),
    ]);
    expect(calls.filter((c) => c.cancelled)).toHaveLength(12 + 4 + 2);
    // 12 charges, 4 of them refunded, and both credits.
    expect(await balanceOf(account.accountId)).toBe(account.balance - 8 * price + 500_000);
    const entries = await allUsageEntries(account.accountId);
    expect(entries.filter((e) => e.kind === "charge")).toHaveLength(12);
    expect(entries.filter((e) => e.status === "refunded")).toHaveLength(4);
    expect(entries.filter((e) => e.kind === "topup")).toHaveLength(2);
  });
});
